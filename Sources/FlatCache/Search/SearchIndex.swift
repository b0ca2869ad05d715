/// An inverted index over messages' text, in memory: each term's documents,
/// with the places it has in each (for phrases and for how often it appears).
///
/// A channel is indexed whole (`replaceChannel`: how an index follows a file
/// another writer changed, without knowing what changed), or message by
/// message (`upsert` and `remove`: a new message, an edit, a deletion, without
/// reading the rest of the channel again). A message is one document, found by
/// its channel and key. Removed and replaced documents stay in the postings,
/// marked dead, until ``compact()`` drops them.
struct SearchIndex<Key: Hashable & Comparable & Sendable>: Sendable {
    /// What the index knows of one message.
    struct Document: Sendable {
        /// The channel's number in ``channels``.
        var channel: Int32
        /// The message's key within its channel.
        var key: Key
        /// The message's sender: its number in ``senders``.
        var sender: Int32
        /// The message's ``SearchFingerprint`` when indexed: what tells an edit.
        var fingerprint: UInt64
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

        /// What tells this message's searchable fields from an edit of them.
        var fingerprint: UInt64 { SearchFingerprint.of(text: text, sender: sender, createdAt: createdAt) }
    }

    /// Every document added since the last compaction, by number, live or not.
    private(set) var documents: [Document] = []
    /// Whether each document is still in the index (not removed since added).
    private(set) var isLive: [Bool] = []
    /// Each document's creation time (milliseconds since 1970): for "newest first" and time filters.
    private(set) var createdAt: [Int64] = []
    /// How many tokens each document's text has: ranking weighs a term against it.
    private(set) var lengths: [Int32] = []
    /// Channel ids, by number.
    private(set) var channels: [String] = []
    private var channelNumbers: [String: Int32] = [:]
    /// Senders' user ids, by number (`""` when unknown): a document keeps a number, not the id.
    private(set) var senders: [String] = []
    private var senderNumbers: [String: Int32] = [:]
    /// Each channel's live documents, by key, by channel number.
    private var channelDocuments: [Int32: [Key: Int32]] = [:]
    /// Every term, by number, and the numbers by term.
    private(set) var terms: [String] = []
    private var termNumbers: [String: Int32] = [:]
    /// Each term's postings, by number.
    private(set) var postings: [SearchPostings] = []
    /// Term numbers sorted by their terms' UTF-8 bytes, for prefixes; `nil` until the first prefix lookup.
    private var sortedTerms: [Int32]?
    /// Terms added since ``sortedTerms`` was made, not in it: looked through one by one, and merged
    /// into it once there are many (sorting every term again at each new word made a prefix lookup
    /// on 589,000 terms take 360 ms after any message with a new word).
    private var unsortedTerms: [Int32] = []
    /// How many documents are live, and their tokens in all.
    private(set) var liveCount = 0
    private(set) var liveLength = 0

    init() {}

    /// Replaces everything the index holds for `channel` with `messages` (none removes it).
    mutating func replaceChannel(_ channel: String, with messages: [Message]) {
        let number = channelNumber(channel)
        for document in channelDocuments.removeValue(forKey: number)?.values ?? [:].values { kill(document) }
        add(messages, channel: number)
    }

    /// Adds `messages` to `channel`, each in place of the document of the same key if there is one.
    mutating func upsert(_ messages: [Message], in channel: String) {
        add(messages, channel: channelNumber(channel))
    }

    /// Removes the documents of `keys` from `channel` (keys it does not hold are passed over).
    mutating func remove(_ keys: some Sequence<Key>, from channel: String) {
        guard let number = channelNumbers[channel] else { return }
        for key in keys {
            if let old = channelDocuments[number]?.removeValue(forKey: key) { kill(old) }
        }
        if channelDocuments[number]?.isEmpty == true { channelDocuments[number] = nil }
    }

    /// Marks `document` dead: searches pass it over until ``compact()`` drops it.
    private mutating func kill(_ document: Int32) {
        isLive[Int(document)] = false
        liveCount -= 1
        liveLength -= Int(lengths[Int(document)])
    }

    /// Adds `messages` as documents of `channel`, each in place of the live document of its key
    /// (a key twice: the last wins).
    private mutating func add(_ messages: [Message], channel: Int32) {
        var scratch = [(term: Int32, place: UInt32)]()
        var keys = channelDocuments.removeValue(forKey: channel) ?? [:]
        for message in messages {
            if let old = keys.removeValue(forKey: message.key) { kill(old) }
            keys[message.key] = add(message, channel: channel, scratch: &scratch)
        }
        channelDocuments[channel] = keys.isEmpty ? nil : keys
    }

    /// The channels that have documents.
    var indexedChannels: [String] { channelDocuments.keys.map { channels[Int($0)] } }

    /// The keys of the live documents of `channel`.
    func keys(in channel: String) -> Set<Key> {
        channelNumbers[channel].flatMap { channelDocuments[$0] }.map { Set($0.keys) } ?? []
    }

    /// The fingerprints of the live documents of `channel`, by key: what a catch-up compares a
    /// message file's records with, to index only the messages that changed.
    func fingerprints(in channel: String) -> [Key: UInt64] {
        channelNumbers[channel].flatMap { channelDocuments[$0] }?.mapValues { documents[Int($0)].fingerprint } ?? [:]
    }

    /// The fingerprint of the live document of `key` in `channel`, if there is one.
    func fingerprint(of key: Key, in channel: String) -> UInt64? {
        guard let number = channelNumbers[channel], let document = channelDocuments[number]?[key] else { return nil }
        return documents[Int(document)].fingerprint
    }

    /// The numbers of `senders`, those the index knows (for a filter).
    func senderNumbers(_ senders: Set<String>) -> Set<Int32> { Set(senders.compactMap { senderNumbers[$0] }) }

    /// Documents removed but still in the postings.
    var deadCount: Int { documents.count - liveCount }

    /// The postings of `term`, if any document ever had it.
    func postings(of term: String) -> SearchPostings? { termNumbers[term].map { postings[Int($0)] } }

    /// Drops the removed documents from the postings and numbers the rest anew.
    mutating func compact() {
        guard deadCount > 0 || channelDocuments.count < channels.count else { return }
        var renumbered = [Int32](repeating: -1, count: documents.count)
        var next: Int32 = 0
        for number in documents.indices where isLive[number] {
            renumbered[number] = next
            next += 1
        }
        let kept = documents.indices.filter { isLive[$0] }
        documents = kept.map { documents[$0] }
        createdAt = kept.map { createdAt[$0] }
        lengths = kept.map { lengths[$0] }
        isLive = Array(repeating: true, count: kept.count)
        var places = [UInt32]()
        postings = postings.map { old in
            var new = SearchPostings()
            var cursor = SearchPostings.Cursor()
            while old.next(&cursor) {
                guard renumbered[Int(cursor.document)] >= 0 else { continue }
                old.places(at: &cursor, into: &places)
                new.append(renumbered[Int(cursor.document)], places)
            }
            return new
        }
        channelDocuments = channelDocuments.mapValues { $0.mapValues { renumbered[Int($0)] } }
        // Channels no live document is in go too (a removed channel's name is not kept).
        let keptChannels = channels.indices.filter { channelDocuments[Int32($0)] != nil }
        var channelRenumbered = [Int32](repeating: -1, count: channels.count)
        for (new, old) in keptChannels.enumerated() { channelRenumbered[old] = Int32(new) }
        // And senders no live document is from (nor is a removed message's sender).
        var senderRenumbered = [Int32](repeating: -1, count: senders.count)
        var keptSenders = [String]()
        for document in documents where senderRenumbered[Int(document.sender)] < 0 {
            senderRenumbered[Int(document.sender)] = Int32(keptSenders.count)
            keptSenders.append(senders[Int(document.sender)])
        }
        documents = documents.map {
            Document(
                channel: channelRenumbered[Int($0.channel)], key: $0.key, sender: senderRenumbered[Int($0.sender)],
                fingerprint: $0.fingerprint)
        }
        channels = keptChannels.map { channels[$0] }
        channelNumbers = Dictionary(uniqueKeysWithValues: channels.enumerated().map { ($1, Int32($0)) })
        senders = keptSenders
        senderNumbers = Dictionary(uniqueKeysWithValues: senders.enumerated().map { ($1, Int32($0)) })
        channelDocuments = Dictionary(
            uniqueKeysWithValues: channelDocuments.map { (channelRenumbered[Int($0.key)], $0.value) })
        // Terms no live document has any more go too: prefixes would keep expanding into them.
        let used = terms.indices.filter { postings[$0].count > 0 }
        terms = used.map { terms[$0] }
        postings = used.map { postings[$0] }
        termNumbers = Dictionary(uniqueKeysWithValues: terms.enumerated().map { ($1, Int32($0)) })
        (sortedTerms, unsortedTerms) = (nil, [])
    }

    /// The index as plain arrays, compacted: what a snapshot file keeps (see ``SearchSnapshot``).
    struct Stored: Sendable {
        var channels: [String]
        var senders: [String]
        var documents: [Document]
        var createdAt: [Int64]
        var lengths: [Int32]
        var terms: [String]
        var postings: [SearchPostings]
    }

    /// The index, compacted, as plain arrays.
    mutating func stored() -> Stored {
        compact()
        return Stored(
            channels: channels, senders: senders, documents: documents, createdAt: createdAt, lengths: lengths, terms: terms,
            postings: postings)
    }

    /// The index `stored` holds; `nil` when its parts do not fit together (a document of a channel
    /// or a sender it does not name, a key twice in a channel, a channel, sender or term twice,
    /// arrays of other lengths).
    init?(stored: Stored) {
        let count = stored.documents.count
        guard stored.createdAt.count == count, stored.lengths.count == count, stored.terms.count == stored.postings.count,
            stored.lengths.allSatisfy({ $0 >= 0 })
        else { return nil }
        channels = stored.channels
        channelNumbers = Dictionary(stored.channels.enumerated().map { ($1, Int32($0)) }, uniquingKeysWith: { $1 })
        guard channelNumbers.count == channels.count else { return nil }
        senders = stored.senders
        senderNumbers = Dictionary(stored.senders.enumerated().map { ($1, Int32($0)) }, uniquingKeysWith: { $1 })
        guard senderNumbers.count == senders.count else { return nil }
        for (number, document) in stored.documents.enumerated() {
            guard document.channel >= 0, Int(document.channel) < channels.count,
                document.sender >= 0, Int(document.sender) < senders.count,
                channelDocuments[document.channel, default: [:]].updateValue(Int32(number), forKey: document.key) == nil
            else { return nil }
        }
        terms = stored.terms
        termNumbers = Dictionary(stored.terms.enumerated().map { ($1, Int32($0)) }, uniquingKeysWith: { $1 })
        guard termNumbers.count == terms.count else { return nil }
        documents = stored.documents
        createdAt = stored.createdAt
        lengths = stored.lengths
        postings = stored.postings
        isLive = Array(repeating: true, count: count)
        liveCount = count
        liveLength = stored.lengths.reduce(0) { $0 + Int($1) }
    }

    /// The numbers of the terms that begin with `prefix` (`prefix` itself included).
    mutating func terms(beginningWith prefix: String) -> [Int32] {
        let precedes = { [terms] (a: Int32, b: Int32) in terms[Int(a)].utf8.lexicographicallyPrecedes(terms[Int(b)].utf8) }
        if sortedTerms == nil {
            sortedTerms = terms.indices.map(Int32.init).sorted(by: precedes)
            unsortedTerms = []
        } else if unsortedTerms.count > 4_096 {
            // Merged in one pass: the sorted terms stay sorted, the new ones are sorted alone.
            let new = unsortedTerms.sorted(by: precedes)
            let old = sortedTerms!
            var merged = [Int32]()
            merged.reserveCapacity(old.count + new.count)
            var (i, j) = (0, 0)
            while i < old.count || j < new.count {
                if j == new.count || (i < old.count && precedes(old[i], new[j])) {
                    merged.append(old[i])
                    i += 1
                } else {
                    merged.append(new[j])
                    j += 1
                }
            }
            (sortedTerms, unsortedTerms) = (merged, [])
        }
        let sorted = sortedTerms!
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if terms[Int(sorted[middle])].utf8.lexicographicallyPrecedes(prefix.utf8) { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < sorted.count, terms[Int(sorted[end])].utf8.starts(with: prefix.utf8) { end += 1 }
        return Array(sorted[low..<end]) + unsortedTerms.filter { terms[Int($0)].utf8.starts(with: prefix.utf8) }
    }

    private mutating func channelNumber(_ channel: String) -> Int32 {
        Self.number(of: channel, in: &channels, numbers: &channelNumbers)
    }

    private mutating func senderNumber(_ sender: String) -> Int32 {
        Self.number(of: sender, in: &senders, numbers: &senderNumbers)
    }

    /// The number of `name` in `names`, added at the end if it is not there yet.
    private static func number(of name: String, in names: inout [String], numbers: inout [String: Int32]) -> Int32 {
        if let number = numbers[name] { return number }
        let number = Int32(names.count)
        names.append(name)
        numbers[name] = number
        return number
    }

    private mutating func termNumber(_ term: String) -> Int32 {
        if let number = termNumbers[term] { return number }
        let number = Int32(terms.count)
        terms.append(term)
        termNumbers[term] = number
        postings.append(SearchPostings())
        if sortedTerms != nil { unsortedTerms.append(number) }
        return number
    }

    /// Adds one message's document and its terms; returns its number.
    private mutating func add(_ message: Message, channel: Int32, scratch: inout [(term: Int32, place: UInt32)]) -> Int32 {
        let number = Int32(documents.count)
        // The message's terms and places, sorted by term (places stay ascending within a term),
        // then appended a term at a time.
        scratch.removeAll(keepingCapacity: true)
        var length = 0
        SearchBytes.with(message.text) { bytes in
            SearchTokenizer.forEachTerm(in: bytes) { term, position, _ in
                scratch.append((termNumber(term), UInt32(position)))
                length = position + 1
            }
        }
        scratch.sort { $0.term != $1.term ? $0.term < $1.term : $0.place < $1.place }
        var start = 0
        var places = [UInt32]()
        while start < scratch.count {
            let term = scratch[start].term
            var end = start
            places.removeAll(keepingCapacity: true)
            while end < scratch.count, scratch[end].term == term {
                places.append(scratch[end].place)
                end += 1
            }
            postings[Int(term)].append(number, places[...])
            start = end
        }
        documents.append(
            Document(channel: channel, key: message.key, sender: senderNumber(message.sender), fingerprint: message.fingerprint))
        isLive.append(true)
        createdAt.append(message.createdAt)
        lengths.append(Int32(clamping: length))
        liveCount += 1
        liveLength += length
        return number
    }
}
