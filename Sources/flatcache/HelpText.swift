/// The paragraphs several commands' help shares: what a read command
/// promises, how it treats an encrypted folder or one of other record types,
/// and the exit statuses.
///
/// Help is the tool's manual (`flatcache help <command>`, and the man page
/// that `Scripts/generate-manual` makes from it), so each command's
/// `discussion` says everything about the command; these keep the shared
/// promises worded once. ASCII only: the man page generator drops every
/// other character, and no line may start with "." or "'" (a roff macro).
enum HelpText {
    /// What every read command (info, verify without --repair, channels,
    /// messages, search, users, outbox, export) promises.
    static let readsOnly = """
        Reads only: it opens the folder read-only, so it works on a cache it may only read (in an \
        app bundle, on a read-only mount, owned by another user) and leaves it byte for byte as it \
        was. Each damaged file it meets is left in place, named on standard error ("Damaged: \
        messages/<key>.lines: ..."), and makes the exit status 1; `flatcache verify --repair` \
        moves it aside.
        """

    /// How a read command that needs the records treats an encrypted folder.
    static let keyRequired = """
        An encrypted folder needs --key-file, a file holding its key as 32 raw bytes or 64 hex \
        digits; without it the command stops with an error naming the folder's key id.
        """

    /// How info, channels, messages, users and outbox show a folder they cannot decode.
    static let otherRecordTypes = """
        A folder written with other record types (an app's own ChatCache<SDKMessage, ...>) cannot \
        be decoded by the tool: it shows its record types, record counts, bytes and when each file \
        was last saved instead.
        """

    /// The exit statuses of a read command.
    static let readExitStatus = """
        Exit status: 0 all well; 1 a damaged file was met, or an error (one "Error: ..." line on \
        standard error, such as "Error: <folder> does not exist." or "Error: <file> is not a \
        folder."); 2 wrong usage (the error and the usage lines).
        """

    /// `lines` as an "Examples:" paragraph, each line indented (help keeps short lines as they are).
    static func examples(_ lines: String...) -> String {
        "Examples:\n" + lines.map { "  " + $0 }.joined(separator: "\n")
    }

    /// Paragraphs separated by a blank line.
    static func paragraphs(_ paragraphs: String...) -> String {
        paragraphs.joined(separator: "\n\n")
    }
}
