public import Observation

/// A search field's model, `@Observable` on the main actor: what a SwiftUI
/// search screen binds to.
///
/// Setting ``text`` (each letter the user types), ``filter`` or ``order``
/// cancels the search under way and starts a new one; ``hits`` then show
/// the new query's first page, never an older query's. ``loadMore()`` adds
/// the next page. While the index is still being built (the first search
/// after launch on a big cache), the hits come from what is indexed so far,
/// and the search runs once more when the build is done. Its calls never
/// throw: a failure lands in ``error``.
///
/// ```swift
/// let model = SearchModel(cache.search)      // in a SwiftUI view: @State var model
/// model.text = "tra"                          // TextField("Search", text: $model.text)
/// await model.settle()                        // (a view just observes `hits`)
/// print(model.hits.map(\.text), model.hasMore)
/// ```
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class SearchModel<Message: MessageRecord> {
    /// The search it asks.
    @ObservationIgnored public let search: MessageSearch<Message>
    /// Hits per page.
    @ObservationIgnored public let pageSize: Int

    /// What the user typed: a change starts a new search.
    public var text = "" {
        didSet { if text != oldValue { restart() } }
    }
    /// The channels, senders and times searched: a change starts a new search.
    public var filter = SearchFilter() {
        didSet { if filter != oldValue { restart() } }
    }
    /// The order of the hits: a change starts a new search.
    public var order = SearchOrder.relevance {
        didSet { if order != oldValue { restart() } }
    }

    /// The hits of ``text`` so far: its first page, and those ``loadMore()`` added.
    public private(set) var hits = [SearchHit<Message>]()
    /// Whether more hits follow ``hits``: show a "more" row, or call ``loadMore()`` at the end of the list.
    public var hasMore: Bool { next != nil }
    /// Whether a search or ``loadMore()`` is under way: show a spinner.
    public private(set) var isSearching = false
    /// How far the index was at the last answer: while it is being built, a progress bar.
    public private(set) var progress: SearchProgress?
    /// What went wrong with the last search; `nil` again once one succeeds.
    public private(set) var error: (any Error)?

    @ObservationIgnored private var next: SearchCursor<Message>?
    /// Counts first pages shown: a next page asked before a new first page is dropped.
    @ObservationIgnored private var firstPages = 0
    @ObservationIgnored private var running: Task<Void, Never>?
    /// Counts queries: an answer to an older one is dropped.
    @ObservationIgnored private var generation = 0

    /// A model of `search`, empty until ``text`` is set.
    ///
    /// - Parameters:
    ///   - search: The search to ask: `cache.search`.
    ///   - pageSize: Hits per page, at least 1; 20 by default.
    public init(_ search: MessageSearch<Message>, pageSize: Int = 20) {
        self.search = search
        self.pageSize = max(1, pageSize)
    }

    /// Adds the next page of hits to ``hits``; does nothing when there is none or a search is under way.
    public func loadMore() async {
        guard let cursor = next, !isSearching else { return }
        let (asked, after) = (generation, firstPages)
        isSearching = true
        defer { if asked == generation { isSearching = false } }
        do {
            let page = try await search.messages(after: cursor)
            guard asked == generation, after == firstPages else { return }
            hits += page.hits
            next = page.next
            progress = page.progress
            error = nil
        } catch {
            if asked == generation, !isCancellation(error) { self.error = error }
        }
    }

    /// Waits until the search under way (if any) has answered: for a "submit", a test, or a preview.
    public func settle() async {
        while let running {
            await running.value
            if running == self.running { break }
        }
    }

    /// Cancels the search under way and starts one for the current text, filter and order.
    private func restart() {
        running?.cancel()
        generation += 1
        let asked = generation
        let (text, filter, order, pageSize, search) = (text, filter, order, pageSize, search)
        next = nil
        guard !SearchQuery(text).isEmpty else {
            (hits, isSearching, error, running) = ([], false, nil, nil)
            return
        }
        isSearching = true
        running = Task { [weak self] in
            do {
                var page = try await search.messages(matching: text, filter: filter, order: order, limit: pageSize)
                self?.show(page, for: asked)
                self?.finish(asked)
                // Answered while the index was being built: once more when it is done (no spinner meanwhile:
                // the progress says how far the index is).
                if !page.progress.isComplete {
                    try await search.prepare()
                    page = try await search.messages(matching: text, filter: filter, order: order, limit: pageSize)
                    self?.show(page, for: asked)
                }
            } catch {
                self?.fail(error, for: asked)
                self?.finish(asked)
            }
        }
    }

    private func show(_ page: SearchPage<Message>, for asked: Int) {
        guard asked == generation else { return }
        (hits, next, progress, error) = (page.hits, page.next, page.progress, nil)
        firstPages += 1
    }

    private func fail(_ failure: any Error, for asked: Int) {
        guard asked == generation, !isCancellation(failure) else { return }
        error = failure
    }

    private func finish(_ asked: Int) {
        guard asked == generation else { return }
        isSearching = false
    }
}
