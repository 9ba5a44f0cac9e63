import JSONText

/// One of Apple's `entity` values: the catalogue kinds it names.
package struct AppleEntity: Sendable, Equatable {
    /// The value as sent, e.g. `musicVideo`.
    package let name: String
    /// The kinds of items it names; empty for Apple entities the EPF does not hold (podcasts, audiobooks).
    package let kinds: Set<EntityKind>
    /// For video entities, the `kind` field the item must have (`feature-movie`, `tv-episode`, `music-video`).
    package var videoKind: String? = nil

    package init(name: String, kinds: Set<EntityKind>, videoKind: String? = nil) {
        self.name = name
        self.kinds = kinds
        self.videoKind = videoKind
    }

    /// Whether an item of `kind` whose object has this `kind` field is of this entity.
    func admits(_ kind: EntityKind, value: JSONValue) -> Bool {
        guard kinds.contains(kind) else { return false }
        guard kind == .video, let videoKind else { return true }
        return value["kind"] == .string(videoKind)
    }
}
