public import FlatCache

/// A cache of a Matrix account: its rooms' messages, the joined rooms, and profiles.
///
/// ```swift
/// let cache = try MatrixCache(directory: folder)
/// ```
public typealias MatrixCache = ChatCache<MatrixMessage, MatrixRoom, ChatUser>
