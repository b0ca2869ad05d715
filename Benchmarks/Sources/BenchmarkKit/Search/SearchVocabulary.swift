/// The words and phrases ``SearchText`` writes messages with, most frequent
/// first in each list: a chat's English (with the accented words English
/// borrows), some Spanish, French, German and Portuguese, Russian, and
/// Japanese, Chinese and Thai, which are written without spaces.
enum SearchVocabulary {
    /// Chat English by rough frequency; the accented loanwords sit among
    /// them at the ranks a chat would use them.
    static let english = [
        "the", "i", "you", "to", "a", "and", "is", "it", "for", "on", "in", "we", "that", "at", "of", "be", "are",
        "me", "can", "just", "so", "this", "have", "do", "will", "ok", "not", "with", "but", "my", "what", "yes",
        "no", "there", "if", "get", "was", "go", "all", "up", "now", "know", "see", "out", "let", "today",
        "tomorrow", "thanks", "time", "good", "think", "here", "how", "about", "when", "meeting", "did", "need",
        "going", "still", "sure", "one", "back", "they", "lol", "great", "want", "from", "call", "your", "then",
        "work", "some", "like", "should", "an", "would", "could", "later", "tonight", "morning", "coffee", "lunch",
        "yeah", "our", "been", "send", "done", "new", "soon", "right", "free", "had", "week", "look", "make",
        "notes", "review", "design", "please", "sorry", "check", "really", "nice", "next", "day", "home", "also",
        "too", "more", "office", "friday", "monday", "weekend", "come", "take", "sounds", "said", "got", "well",
        "train", "late", "minutes", "any", "doc", "trail", "hike", "plan", "ship", "update", "link", "photo",
        "café", "dinner", "anyone", "who", "where", "why", "leave", "start", "meet", "first", "last", "long", "way",
        "thing", "people", "team", "job", "feel", "love", "happy", "birthday", "party", "game", "watch", "movie",
        "saturday", "sunday", "thursday", "tuesday", "wednesday", "early", "night", "hour", "tickets", "station",
        "travel", "track", "traffic", "tram", "trip", "flight", "hotel", "bus", "car", "parking", "rain", "weather",
        "cold", "hot", "sun", "beach", "park", "run", "gym", "slides", "deck", "draft", "deadline", "launch",
        "release", "bug", "fix", "test", "build", "deploy", "server", "down", "again", "works", "working",
        "broken", "issue", "ticket", "merge", "branch", "code", "agenda", "room", "zoom", "invite", "calendar",
        "moved", "cancel", "cancelled", "confirm", "confirmed", "budget", "invoice", "report", "numbers",
        "client", "demo", "feedback", "idea", "question", "answer", "help", "problem", "easy", "hard", "maybe",
        "probably", "almost", "already", "yet", "never", "always", "every", "other", "another", "both", "few",
        "many", "much", "little", "big", "small", "best", "better", "worse", "wait", "waiting", "ready", "left",
        "arrived", "home", "kids", "school", "pick", "dog", "cat", "food", "pizza", "sushi", "beer", "wine",
        "cafeteria", "breakfast", "snacks", "groceries", "recipe", "jalapeño", "crème", "brûlée", "résumé",
        "naïve", "fiancé", "déjà", "vu", "José", "Zoë", "Ødegaard", "Málaga", "São", "Paulo", "Zürich", "München",
        "Kraków", "façade", "entrée", "piñata", "Pokémon", "über", "señor", "Ångström", "Tromsø", "Björk",
        "mountain", "summit", "boots", "tent", "campsite", "map", "route", "km", "miles", "view", "sunset", "lake",
        "river", "bridge", "downtown", "airport", "gate", "delayed", "boarding", "landed", "taxi", "uber",
        "bike", "walk", "drive", "ride", "seat", "table", "booked", "reservation", "menu", "bill", "split",
        "paid", "owe", "money", "cash", "card", "account", "password", "login", "email", "message", "phone",
        "battery", "charger", "laptop", "screen", "printer", "wifi", "internet", "app", "version", "install",
        "download", "upload", "file", "folder", "share", "access", "permission", "team", "manager", "boss",
        "interview", "offer", "contract", "meeting", "standup", "retro", "sprint", "roadmap", "quarter",
        "goals", "metrics", "dashboard", "chart", "data", "search", "index", "cache", "offline", "sync",
    ]

    /// Phrases a chat repeats, written as one unit: what quoted searches look for.
    static let englishPhrases = [
        "see you there", "let me know", "on my way", "see you tomorrow", "talk later", "sounds good",
        "design review", "meeting notes", "thank you", "no worries", "good morning", "good night", "be right back",
        "running late", "coffee tomorrow", "lunch on friday", "in five minutes", "happy birthday",
        "the trail head", "at the station", "call me when you can", "did you see", "can we move",
        "are we still on", "I think so", "not sure yet", "just landed", "what time", "heads up",
        "end of day", "the release notes", "the design doc", "a quick call", "for the record",
    ]

    /// Spanish, French, German and Portuguese, accents as typed.
    static let european = [
        "de", "la", "que", "el", "en", "y", "le", "et", "les", "und", "die", "der", "ist", "não", "você", "mañana",
        "también", "qué", "está", "reunión", "café", "gracias", "sí", "hola", "très", "bientôt", "déjà", "à",
        "été", "ça", "où", "réunion", "merci", "für", "schön", "müde", "Grüße", "über", "Straße", "heute",
        "morgen", "olá", "obrigado", "ótimo", "amanhã", "até", "logo", "niño", "año", "adiós", "después",
        "señal", "café", "crêpe", "garçon", "fête", "hôtel", "château", "Bahnhof", "Brötchen", "Käse",
    ]

    /// Russian.
    static let russian = [
        "я", "ты", "мы", "и", "в", "на", "не", "это", "да", "нет", "привет", "спасибо", "завтра", "сегодня",
        "хорошо", "встреча", "кофе", "позже", "увидимся", "отлично", "пожалуйста", "как", "дела", "буду",
        "через", "минут", "обед", "работа", "документ", "проверь", "Москва", "поезд", "опаздываю", "приду",
        "прямо", "сейчас", "приятного", "аппетита", "вечером", "утром", "понял", "договорились", "ладно",
    ]

    /// Japanese words and phrases, written one after another without spaces.
    static let japanese = [
        "です", "ます", "ありがとう", "よろしく", "お願いします", "了解", "明日", "今日", "会議", "東京", "駅",
        "電車", "遅れます", "大丈夫", "ごめん", "すみません", "ランチ", "コーヒー", "資料", "確認", "週末",
        "楽しみ", "新宿", "渋谷", "会議室", "時間", "予定", "写真", "送ります", "おはよう", "お疲れ様",
        "今から", "行きます", "着きました", "雨", "天気", "東京駅", "タワー", "ビール", "ラーメン",
    ]

    /// Chinese words and phrases, written one after another without spaces.
    static let chinese = [
        "我们", "好的", "谢谢", "明天", "今天", "开会", "没问题", "下周见", "北京", "上海", "晚上", "吃饭", "咖啡",
        "文件", "已经", "发给你", "收到", "周末", "一起", "怎么样", "可以", "时间", "地铁", "到了", "马上",
        "会议室", "不好意思", "辛苦了", "早上好", "东京", "火锅", "出发",
    ]

    /// Thai words, written one after another without spaces.
    static let thai = [
        "ครับ", "ค่ะ", "สวัสดี", "ขอบคุณ", "พรุ่งนี้", "ประชุม", "วันนี้", "เจอกัน", "ไม่เป็นไร", "ได้เลย",
        "กรุงเทพ", "กาแฟ", "กินข้าว", "ตอนเย็น", "รถติด", "ถึงแล้ว",
    ]

    /// Emoji as a chat sends them: presentation selectors, a skin tone, a flag, a family.
    static let emoji = ["👍", "😂", "🙏", "🎉", "❤️", "😊", "🚀", "👋", "🔥", "😅", "☕️", "🥾", "👍🏽", "🇯🇵", "👨‍👩‍👧"]
}
