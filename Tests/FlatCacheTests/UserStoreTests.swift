import FlatCache
import Foundation
import Testing

@Suite struct UserStoreTests {
    let folder: TemporaryFolder
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(directory: folder.url)
    }

    @Test func savesUpsertsAndLoadsByUserID() throws {
        try cache.users.blocking.save([ChatUser(userID: "zoe", nickname: "Zoë"), ChatUser(userID: "al", nickname: "Al")])
        try cache.users.blocking.save([ChatUser(userID: "zoe", nickname: "Zoë S."), ChatUser(userID: "mo", nickname: "Mo")])
        #expect(try cache.users.blocking.load().map(\.nickname) == ["Al", "Mo", "Zoë S."])
    }

    @Test func looksOneUpByID() throws {
        try cache.users.blocking.save([Fixtures.mina])
        #expect(try cache.users.blocking.user(withID: "mina") == Fixtures.mina)
        #expect(try cache.users.blocking.user(withID: "nobody") == nil)
    }

    @Test func removesUsers() throws {
        try cache.users.blocking.save([ChatUser(userID: "a", nickname: "A"), ChatUser(userID: "b", nickname: "B")])
        try cache.users.blocking.remove(userIDs: ["a", "not-cached"])
        #expect(try cache.users.blocking.load().map(\.userID) == ["b"])
    }

    @Test func savingTheSameUsersSkipsTheWrite() throws {
        try cache.users.blocking.save([Fixtures.mina])
        #expect(try cache.users.blocking.save([Fixtures.mina]) == SaveResult(filesUnchanged: 1))
    }

    @Test func anEmptyUserIDIsRejectedBeforeAnythingIsWritten() throws {
        #expect(throws: FlatCacheError.self) {
            try cache.users.blocking.save([Fixtures.mina, ChatUser(userID: "", nickname: "?")])
        }
        #expect(try cache.users.blocking.load() == [])
    }

    @Test func idsThatLookAlikeStayApart() throws {
        // "é" precomposed and decomposed are equal Swift strings but different ids
        let composed = ChatUser(userID: "jos\u{E9}", nickname: "one")
        let decomposed = ChatUser(userID: "jose\u{301}", nickname: "two")
        try cache.users.blocking.save([composed, decomposed, ChatUser(userID: "JOSÉ", nickname: "three")])
        #expect(try cache.users.blocking.load().count == 3)
    }
}
