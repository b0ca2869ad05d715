import Testing

@testable import FlatCache

/// Whether a message meets a query, and what to highlight: the reference every index agrees with.
struct SearchMatchTests {
    /// The highlighted parts of `text` for `query`, or `nil` when it is not a hit.
    private func highlights(_ query: String, in text: String) -> [String]? {
        SearchQuery(query).match(in: text)?.map { String(text[$0]) }
    }

    @Test func everyWordMustBeThere() {
        #expect(highlights("coffee tomorrow ", in: "Coffee tomorrow? Sure, coffee!") == ["Coffee", "tomorrow", "coffee"])
        #expect(highlights("coffee tonight ", in: "Coffee tomorrow?") == nil)
        #expect(highlights("", in: "anything") == nil)
    }

    @Test func aPrefixFindsTheWordsItBegins() {
        #expect(highlights("tra", in: "The trail and the tram") == ["trail", "tram"])
        #expect(highlights("tra ", in: "The trail and the tram") == nil)
        #expect(highlights("jos", in: "José said hi") == ["José"])
    }

    @Test func aPhraseNeedsItsWordsInOrderAndTogether() {
        #expect(highlights("\"see you there\"", in: "See you there at 7, see you!") == ["See you there"])
        #expect(highlights("\"you see\"", in: "See you there") == nil)
        #expect(highlights("\"see there\"", in: "See you there") == nil)
    }

    @Test func foldingWorksBothWays() {
        #expect(highlights("cafe ", in: "Meet at the CAFÉ") == ["CAFÉ"])
        #expect(highlights("CAFÉ ", in: "meet at the cafe") == ["cafe"])
        #expect(highlights("strasse ", in: "Hauptstraße? No: Straße 5") == ["Straße"])
        #expect(highlights("odegaard ", in: "Ødegaard scored") == ["Ødegaard"])
    }

    @Test func chineseAndJapaneseAreFoundInsideRuns() {
        #expect(highlights("東京", in: "明日東京タワーに行く") == ["東京"])
        #expect(highlights("タワー", in: "明日東京タワーに行く") == ["タワー"])
        #expect(highlights("京", in: "明日東京タワーに行く") == ["京タ"])
        #expect(highlights("東京タワー", in: "明日東京タワーに行く") == ["東京タワー"])
        #expect(highlights("京東", in: "明日東京タワーに行く") == nil)
        // One character found where it ends a run, too.
        #expect(highlights("く", in: "明日東京タワーに行く") == ["く"])
    }

    @Test func thaiIsFoundInsideRuns() {
        #expect(highlights("สวัสดี", in: "สวัสดีครับ") == ["สวัสดี"])
        #expect(highlights("ครับ", in: "สวัสดีครับ") == ["ครับ"])
    }

    @Test func aLetterIsFoundWhileItsMarksAreStillToCome() {
        // สว is on its way to สวัสดี: the vowel mark ั comes after ว.
        #expect(highlights("สว", in: "สวัสดีครับ") == ["สวั"])
        #expect(highlights("\"hello 東\"", in: "hello 東京タワー") == ["hello 東京"])
        #expect(highlights("ガス ", in: "ｶﾞｽ料金") == ["ｶﾞｽ"])
    }

    @Test func aPhraseIsNotFoundPastWherePlacesWouldOverflow() throws {
        let text = String(repeating: "w ", count: 70_000) + "alpha beta gamma see you"
        #expect(highlights("\"alpha gamma\"", in: text) == nil)
        #expect(highlights("\"you see\"", in: text) == nil)
        var index = SearchIndex<Int>()
        index.replaceChannel("c", with: [.init(key: 1, sender: "u", createdAt: 1, text: text)])
        #expect(try index.search(SearchQuery("\"alpha gamma\"")).isEmpty)
        #expect(try index.search(SearchQuery("\"see see\"")).isEmpty)
        #expect(try index.search(SearchQuery("\"beta gamma\"")).count == 1)
    }

    @Test func aPhraseMayStartWithOneCharacterOfARun() {
        // "東" begins the pair 東京, and 京 is the run's last character, at the next place.
        #expect(highlights("\"東 京\"", in: "東京") == ["東京"])
        #expect(highlights("\"東 京都\"", in: "東京都") == ["東京都"])
    }

    @Test func anOpenQuotesLastWordIsAPrefixWhileTheUserTypes() {
        #expect(highlights("\"see you th", in: "See you there") == ["See you there"])
        #expect(highlights("\"see you th ", in: "See you there") == nil)
    }

    @Test func hebrewPointsAndArabicVowelSignsFoldAway() {
        #expect(highlights("محمد ", in: "قال مُحَمَّد") == ["مُحَمَّد"])
        #expect(highlights("שלום ", in: "שָׁלוֹם לכולם") == ["שָׁלוֹם"])
        // Cased letters of Cyrillic Extended-B and Latin Extended-D fold too.
        #expect(highlights("ꙁ ", in: "Ꙁ") == ["Ꙁ"])
        #expect(highlights("ꜳ ", in: "Ꜳ") == ["Ꜳ"])
    }

    @Test func emojiAreFoundWhateverTheirSkinTone() {
        #expect(highlights("👍", in: "ok 👍🏽 done") == ["👍🏽"])
        #expect(highlights("❤️", in: "love it ❤") == ["❤"])
    }
}
