import EPFFormat
import EPFImport
import EPFStore

/// SQL for a small catalogue in the importer's contract schema, shared by the query and server tests.
public enum CatalogueFixture {
    /// The tables of the small catalogue.
    public static let tables = [
        "application", "application_detail", "application_device_type", "device_type", "artist", "artist_application",
        "genre", "genre_application", "storefront", "media_type", "collection", "song", "video", "collection_song",
        "application_price", "application_popularity_per_genre",
    ]

    /// The contract schema: each table of `tables` as the SQLite store creates it from a clean file
    /// (`EPFCatalogue`'s columns and key, prices TEXT, dates ISO TEXT), with its indexes.
    public static let schema: String = tables.compactMap(EPFCatalogue.table(named:)).map { table in
        let stored = KnownSchemas.clean(table)
        return ([stored.createTableSQL()] + stored.createIndexSQL(on: table.name, suffix: "fixture"))
            .joined(separator: ";\n") + ";"
    }.joined(separator: "\n")

    /// Rows every test can rely on.
    public static let rows = """
    INSERT INTO storefront VALUES (1, 143441, 'USA', 'United States'), (1, 143443, 'DEU', 'Germany'),
        (1, 143462, 'JPN', 'Japan'), (1, 143444, 'GBR', 'United Kingdom'), (1, 143466, 'KOR', 'Korea'),
        (1, 143442, 'FRA', 'France');
    INSERT INTO device_type VALUES (1, 1, 'iPhone'), (1, 2, 'iPad');
    INSERT INTO genre VALUES (1, 36, NULL, 'App Store'), (1, 6018, 36, 'Books'), (1, 6006, 36, 'Reference'),
        (1, 6014, 36, 'Games'), (1, 7001, 6014, 'Action');
    INSERT INTO media_type VALUES (1, 1, 'Music'), (1, 11, 'Books'), (1, 6, 'Movies'), (1, 7, 'Music Videos');
    INSERT INTO application VALUES
        (1452074401007, 364709193, 'iBooks', '4+', 'Apple', 'Apple Inc.', 'http://www.apple.com',
         'http://support.apple.com', 'http://itunes.apple.com/app/ibooks/id364709193?uo=5',
         'http://a1.mzstatic.com/large.png', 'http://a1.mzstatic.com/small.png', '2010-04-03',
         '© Apple', 'Read books.' || char(10) || 'Line two.', '4.1', '4.1', 51234567),
        (1452074401007, 562148264, 'Baby Snap Date', '12+', 'Snap Co', 'Snap Co', NULL, NULL,
         'http://itunes.apple.com/app/baby-snap-date/id562148264?uo=5', NULL, NULL, '2012',
         NULL, NULL, '1.0', NULL, 1000),
        (1452074401007, 700000001, 'Café Olé', '4+', 'Zoë Dev', 'Zoë Dev', NULL, NULL, NULL, NULL, NULL,
         '2012-09-25T10:00:00Z', NULL, NULL, '2.0', NULL, NULL),
        (1452074401007, 700000002, '東京タワー案内', '4+', '日本開発', '日本開発', NULL, NULL, NULL, NULL,
         NULL,
         NULL, NULL, NULL, '1.0', NULL, NULL),
        (1452074401007, 700000003, 'Cafeteria Manager', '9+', 'Other Dev', 'Other Dev', NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, '1.0', NULL, NULL),
        (1452074401007, 700000004, 'Angry "Quotes" AND( OR', '4+', 'Hostile', 'Hostile', NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, '1.0', NULL, NULL),
        (1452074401007, 700000005, '서울 지하철', '4+', '한국', '한국', NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, '1.0', NULL, NULL);
    INSERT INTO application_detail (export_date, application_id, language_code, title, description, release_notes)
        VALUES (1, 364709193, 'FR', 'iBooks (français)', 'Lire des livres.', 'Corrections'),
               (1, 364709193, 'en', 'iBooks', 'Read books.', 'Fixes');
    INSERT INTO application_device_type VALUES (1, 364709193, 1), (1, 364709193, 2);
    INSERT INTO artist VALUES (1, 284417353, 'Apple', 1, 'https://itunes.apple.com/us/artist/apple/id284417353', 7),
        (1, 900000001, 'Édith Piaf', 1, 'https://music.apple.com/fr/artist/edith-piaf/id900000001', 1);
    INSERT INTO artist_application VALUES (1, 284417353, 364709193);
    INSERT INTO genre_application VALUES (1, 6018, 364709193, 1), (1, 6006, 364709193, 0),
        (1, 6014, 562148264, 1), (1, 6014, 700000001, 1), (1, 6014, 700000003, 1);
    INSERT INTO application_popularity_per_genre VALUES (1, 143441, 6014, 700000003, 1),
        (1, 143441, 6014, 562148264, 2);
    INSERT INTO application_price VALUES
        (1, 364709193, '0.000', 'USD', 143441), (1, 364709193, '0.000', 'EUR', 143443),
        (1, 562148264, '0.990', 'USD', 143441), (1, 562148264, '0.99', 'EUR', 143443),
        (1, 562148264, '120.000', 'JPY', 143462), (1, 562148264, '0.79', 'GBP', 143444),
        (1, 562148264, '1200.000', 'KRW', 143466), (1, 562148264, '1234.5', 'EUR', 143442);
    INSERT INTO collection VALUES
        (1, 500000001, 'La Vie en rose', NULL, NULL, NULL, 'Édith Piaf',
         'https://itunes.apple.com/fr/album/la-vie-en-rose/id500000001', 'http://a1/art.jpg', '1947',
         '2005-01-01', 'Columbia', NULL, '℗ 1947', NULL, 1, 0, 1),
        (1, 500000002, 'A Book of Things', NULL, NULL, NULL, 'Some Author', NULL, NULL, NULL, '2011-05-05',
         NULL, NULL, NULL, NULL, 11, 0, 1);
    INSERT INTO song VALUES (1, 600000001, 'La Vie en rose', NULL, NULL, NULL, 'Édith Piaf', 'La Vie en rose',
        'https://itunes.apple.com/fr/album/la-vie-en-rose/id500000001?i=600000001', '1947', '2005-01-01', 185000,
        NULL, NULL, 'http://preview', 30000);
    INSERT INTO collection_song VALUES (1, 500000001, 600000001, 1, 1);
    INSERT INTO video VALUES (1, 800000001, 'Big Movie', NULL, NULL, NULL, 'Director', NULL, 6,
        'https://itunes.apple.com/us/movie/big-movie/id800000001', NULL, '2001', '2001-02-03', NULL, NULL, NULL,
        7200000, NULL, NULL, 'Short.', 'Long description.', NULL);
    """
}
