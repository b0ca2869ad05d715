import FlatCache
import Foundation

/// How a search hit's matched words are marked in a line of text: in bold
/// on a terminal, in brackets (`[trail]`) when the output goes to a file or
/// a pipe, where escape codes would be noise.
enum Highlighting {
    /// `[word]`: readable anywhere, and what scripts and tests see.
    case brackets
    /// ANSI bold: for a person at a terminal.
    case bold

    /// Bold when standard output is a terminal and `NO_COLOR` is not set (no-color.org); brackets otherwise.
    static var forStandardOutput: Highlighting {
        isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil ? .bold : .brackets
    }

    /// The hit's text on one line, its matched words marked.
    ///
    /// Line breaks and tabs become spaces, so that each hit stays one line.
    func mark<Message>(_ hit: SearchHit<Message>) -> String {
        let (open, close) = switch self {
        case .brackets: ("[", "]")
        case .bold: ("\u{1B}[1m", "\u{1B}[0m")
        }
        return Self.oneLine(hit.markedText(open: open, close: close)[...])
    }

    private static func oneLine(_ text: Substring) -> String {
        String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }
}
