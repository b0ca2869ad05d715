/// An inverted index over messages' text, in memory: each term's documents,
/// with the places it has in each (for phrases) and how often (for ranking).
///
/// Documents are added a channel at a time and removed the same way: a channel
/// whose file changed is read again whole (`replaceChannel`), which is how an
/// index follows every kind of change without knowing what it was. Removed
/// documents stay in the postings, marked dead, until ``compact()`` drops them.
///
/// Places are kept as 16 bits: a phrase is found within a message's first
/// 65,535 tokens (every later token shares the last place).
struct SearchIndex<Key: Hashable & Sendable>: Sendable {
    /// What the index knows of one message.
    struct Document: Sendable {
        /// The channel's number in ``channels``.
        var channel: Int32
        /// The message's key within its channel.
        var key: Key
        /// The message's sender, as the app's user id.
        var sender: String
        /// Milliseconds since 1970, for "newest first" and time filters.
        var createdAt: Int64
        /// How many tokens its text has (ranking weighs a term against it).
        var length: Int32
        /// Whether it is still in the index (not removed since added).
        var isLive: Bool
    }

    /// The documents of one term, in the order they were added.
    struct Postings: Sendable {
        /// Each document's number.
        var documents: [Int32] = []
        /// Where each document's places start in ``places`` (they end where the next one's start).
        var placeStarts: [Int32] = []
        /// The term's places in each document, in order.
        var places: [UInt16] = []

        /// The places of the `index`th document.
        func places(at index: Int) -> ArraySlice<UInt16> {
            let end = index + 1 < placeStarts.count ? Int(placeStarts[index + 1]) : places.count
            return places[Int(placeStarts[index])..<end]
        }
    }

    /// The message text of a document to add.
    struct Message: Sendable {
        /// Its key within its channel.
        var key: Key
        /// Its sender's user id.
        var sender: String
        /// Milliseconds since 1970.
        var createdAt: Int64
        /// The text searched.
        var text: String
    }

    private(set) var documents: [Document] = []
    private(set) var postings: [String: Postings] = [:]
    /// Channel ids, by number.
    private(set) var channels: [String] = []
    private var channelNumbers: [String: Int32] = [:]
    /// Each channel's live documents, by number.
    private var channelDocuments: [Int32: [Int32]] = [:]
    /// Every term, sorted by UTF-8 bytes, for prefixes; `nil` after a term was added until the next prefix lookup.
    private var sortedTerms: [String]?
    /// How many documents are live, and their tokens in all.
    private(set) var liveCount = 0
    private(set) var liveLength = 0

    init() {}

    /// Replaces everything the index holds for `channel` with `messages` (none removes it).
    mutating func replaceChannel(_ channel: String, with messages: [Message]) {
        let number = channelNumber(channel)
        for document in channelDocuments[number] ?? [] {
            documents[Int(document)].isLive = false
            liveCount -= 1
            liveLength -= Int(documents[Int(document)].length)
        }
        var added = [Int32]()
        added.reserveCapacity(messages.count)
        for message in messages { added.append(add(message, channel: number)) }
        channelDocuments[number] = added.isEmpty ? nil : added
    }

    /// The channels that have documents.
    var indexedChannels: [String] { channelDocuments.keys.map { channels[Int($0)] } }

    /// Documents removed but still in the postings.
    var deadCount: Int { documents.count - liveCount }

    /// Drops the removed documents from the postings and numbers the rest anew.
    mutating func compact() {
        guard deadCount > 0 else { return }
        var renumbered = [Int32](repeating: -1, count: documents.count)
        var kept = [Document]()
        kept.reserveCapacity(liveCount)
        for (number, document) in documents.enumerated() where document.isLive {
            renumbered[number] = Int32(kept.count)
            kept.append(document)
        }
        var compacted = [String: Postings](minimumCapacity: postings.count)
        for (term, old) in postings {
            var new = Postings()
            for index in old.documents.indices where renumbered[Int(old.documents[index])] >= 0 {
                new.documents.append(renumbered[Int(old.documents[index])])
                new.placeStarts.append(Int32(new.places.count))
                new.places += old.places(at: index)
            }
            if !new.documents.isEmpty { compacted[term] = new }
        }
        channelDocuments = channelDocuments.mapValues { $0.map { renumbered[Int($0)] } }
        (documents, postings, sortedTerms) = (kept, compacted, nil)
    }

    /// The terms that begin with `prefix` (`prefix` itself included), by their UTF-8 bytes.
    mutating func terms(beginningWith prefix: String) -> ArraySlice<String> {
        if sortedTerms == nil { sortedTerms = postings.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        let terms = sortedTerms!
        var low = 0
        var high = terms.count
        while low < high {
            let middle = (low + high) / 2
            if terms[middle].utf8.lexicographicallyPrecedes(prefix.utf8) { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < terms.count, terms[end].utf8.starts(with: prefix.utf8) { end += 1 }
        return terms[low..<end]
    }

    private mutating func channelNumber(_ channel: String) -> Int32 {
        if let number = channelNumbers[channel] { return number }
        let number = Int32(channels.count)
        channels.append(channel)
        channelNumbers[channel] = number
        return number
    }

    /// Adds one message's document and its terms; returns its number.
    private mutating func add(_ message: Message, channel: Int32) -> Int32 {
        let number = Int32(documents.count)
        // The message's places, term by term, before they go into the postings.
        var slots = [String: Int]()
        var termPlaces = [[UInt16]]()
        var length = 0
        SearchBytes.with(message.text) { bytes in
            SearchTokenizer.forEachTerm(in: bytes) { term, position, _ in
                let place = UInt16(clamping: position)
                if let slot = slots[term] {
                    termPlaces[slot].append(place)
                } else {
                    slots[term] = termPlaces.count
                    termPlaces.append([place])
                }
                length = position + 1
            }
        }
        for (term, slot) in slots {
            if postings[term] == nil { sortedTerms = nil }
            postings[term, default: Postings()].append(number, termPlaces[slot])
        }
        documents.append(
            Document(
                channel: channel, key: message.key, sender: message.sender, createdAt: message.createdAt,
                length: Int32(clamping: length), isLive: true))
        liveCount += 1
        liveLength += length
        return number
    }
}

extension SearchIndex.Postings {
    fileprivate mutating func append(_ document: Int32, _ places: [UInt16]) {
        documents.append(document)
        placeStarts.append(Int32(self.places.count))
        self.places += places
    }
}
