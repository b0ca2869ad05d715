/// The blocking search, for code that may wait: a command-line tool, a script, a thread of its own.
extension MessageSearch {
    /// The same calls, each answering on the caller's thread.
    ///
    /// ```swift
    /// try cache.search.blocking.prepare()
    /// let page = try cache.search.blocking.messages(matching: "trail")
    /// ```
    public var blocking: Blocking { Blocking(search: self) }

    /// Search's blocking calls: the twins of its `async` calls, with the same
    /// names, arguments and results, that wait on the caller's thread.
    ///
    /// Each call blocks the calling thread on the index (a search waits for
    /// the index to take in the latest changes, which reads their files). An
    /// app calls the `async` forms (`try await cache.search.messages(matching:)`);
    /// these are for a tool's `main`, a script or a thread of its own.
    public struct Blocking: Sendable {
        let search: MessageSearch

        /// The first page of hits of `text` (see ``MessageSearch/messages(matching:filter:order:limit:)``).
        ///
        /// - important: Blocks the calling thread on disk I/O: never call it from the main actor or a task.
        /// - Throws: ``FlatCacheError/invalidLimit(_:)`` or a file-system error.
        public func messages(
            matching text: String, filter: SearchFilter = SearchFilter(), order: SearchOrder = .relevance, limit: Int = 20
        ) throws(FlatCacheError) -> SearchPage<Message> {
            guard limit > 0 else { throw .invalidLimit(limit) }
            return try page(SearchRequest(text: text, filter: filter, order: order, limit: limit), after: nil)
        }

        /// The page that follows the one `cursor` came with (see ``MessageSearch/messages(after:)``).
        ///
        /// - important: Blocks the calling thread on disk I/O: never call it from the main actor or a task.
        /// - Throws: A file-system error.
        public func messages(after cursor: SearchCursor<Message>) throws(FlatCacheError) -> SearchPage<Message> {
            try page(cursor.request, after: cursor.position)
        }

        /// How far the index is; starts building it when nothing has yet (see ``MessageSearch/progress()``).
        ///
        /// - important: Blocks the calling thread: never call it from the main actor or a task.
        /// - Throws: A file-system error (the cache folder cannot be listed).
        public func progress() throws(FlatCacheError) -> SearchProgress {
            let service = search.service
            return try service.blocking { () throws(FlatCacheError) in
                try service.startIfNeeded()
                return service.progress
            }
        }

        /// Builds the index if it is not built, and waits until every cached message is in it
        /// (see ``MessageSearch/prepare()``).
        ///
        /// - important: Blocks the calling thread until the build is done: never call it from the main actor or a task.
        /// - Returns: The progress then (complete).
        /// - Throws: A file-system error.
        @discardableResult
        public func prepare() throws(FlatCacheError) -> SearchProgress {
            try search.service.waitUntilComplete()
        }

        private func page(
            _ request: SearchRequest, after position: SearchIndex<Message.MessageID>.PageCursor?
        ) throws(FlatCacheError) -> SearchPage<Message> {
            let service = search.service
            let answer = try service.blocking { () throws(FlatCacheError) in
                try service.search(request, after: position, isCancelled: { false })
            }
            // Nothing cancels a blocking search.
            return SearchPage(answer!, request: request)
        }
    }
}
