import EPFSQLite

/// The full-text index `epf_search` over titles and artist/seller names, used by `epf search`.
///
/// An FTS5 table with columns `kind` and `id` (unindexed), `title` and `names`, tokenized by
/// `unicode61 remove_diacritics 2` so case and accents do not matter. Runs of CJK, Kana and Hangul
/// characters would be one token each for unicode61, so `searchText(_:)` puts a space between such
/// characters on both sides (index and query): any CJK word is then found as a phrase.
///
/// What readers need is here; the store builds the index (EPFStore's `SearchIndex.rebuild`).
package enum SearchIndex {
    /// The name of the index's stamp in `epf_derived` (see `DerivedData`): the tables it was built from.
    package static let derivedName = "search_index"

    /// The entity kinds stored in the index's `kind` column, per source table.
    package static let kinds = ["software", "ebook", "album", "song", "video", "artist"]

    /// Puts a space between consecutive CJK ideographs, Kana and Hangul characters; other text is unchanged.
    ///
    /// "東京タワー" becomes "東 京 タ ワ ー", so each character is a token and the word is a phrase.
    package static func searchText(_ text: String) -> String {
        var text = text
        return text.withUTF8 { utf8 in
            guard let spaced = CJKSpacing.space(UnsafeRawBufferPointer(utf8)) else {
                return String(decoding: utf8, as: UTF8.self)
            }
            return String(decoding: spaced, as: UTF8.self)
        }
    }
}
