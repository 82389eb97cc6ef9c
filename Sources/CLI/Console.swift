import AASA
import Posix

/// Where the CLI writes: results to stdout, diagnostics and logs to stderr (STYLE: CLI output).
///
/// Tests substitute a capturing console, so subcommands run in-process without touching the terminal.
public protocol Console: AnyObject {
    func out(_ text: String)
    func outBytes(_ bytes: [UInt8])
    func err(_ text: String)
    /// Colour is used only when stderr is a terminal and never with `--json`.
    var stderrIsTerminal: Bool { get }
    /// Reports printed on stdout (`check`) are coloured only when stdout is a terminal.
    var stdoutIsTerminal: Bool { get }
    /// A person reads stdout (colour aside): `generate` then ends its exact bytes with a newline.
    var stdoutIsInteractive: Bool { get }
}

extension Console {
    public var stdoutIsTerminal: Bool { false }
    public var stdoutIsInteractive: Bool { false }
}

public final class StandardConsole: Console {
    public init() {}

    public func out(_ text: String) { outBytes(Array(text.utf8)) }

    public func outBytes(_ bytes: [UInt8]) { Posix.writeAll(1, bytes) }

    public func err(_ text: String) { Posix.writeAll(2, Array(text.utf8)) }

    public var stderrIsTerminal: Bool { Posix.isTerminal(2) && Posix.environment("NO_COLOR") == nil }

    public var stdoutIsTerminal: Bool { Posix.isTerminal(1) && Posix.environment("NO_COLOR") == nil }

    public var stdoutIsInteractive: Bool { Posix.isTerminal(1) }
}

/// File access at the CLI edge; the pure library receives the reader as a closure.
enum Files {
    /// The name standing for standard input wherever a file is named (`--file -`).
    static let standardInput = "-"

    /// How findings name a file: `<stdin>` for `-`.
    static func displayName(_ path: String) -> String { path == standardInput ? "<stdin>" : path }

    /// Reads a file, or standard input for `-`; a named pipe too (`--file <(curl …)`), bounded like `-`.
    static func read(_ path: String, limit: Int = Posix.ReadLimit.document) -> Result<[UInt8], FileReadError> {
        do throws(FileError) {
            if path == standardInput { return .success(try Posix.readStandardInput(limit: limit)) }
            do throws(FileError) {
                return .success(try Posix.readFile(path, limit: limit))
            } catch {
                guard case .notRegularFile(let what) = error.kind, what != "a directory" else { throw error }
                return .success(try Posix.readPipe(path, limit: limit))
            }
        } catch {
            var failure = FileReadError(error.message)
            if case .tooLarge(_, let size) = error.kind { failure.size = size }
            return .failure(failure)
        }
    }

    static func exists(_ path: String) -> Bool { Posix.fileExists(path) }

    /// "a FIFO (named pipe)" or "a character device" for what is read whole, like standard input; nil
    /// for a file.
    static func pipeKind(_ path: String) -> String? { Posix.pipeKind(path) }

    /// Reads a file the user named on the command line; on failure says why on stderr and returns nil
    /// (the caller exits with the usage status).
    static func readArgument(_ path: String, console: any Console, limit: Int = Posix.ReadLimit.document) -> [UInt8]? {
        switch read(path, limit: limit) {
        case .success(let bytes): return bytes
        case .failure(let error):
            console.err("error: cannot read \"\(path)\": \(error.message)\n")
            return nil
        }
    }

    /// Writes through a temporary file and a rename, so a reader never sees half a file.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        try Posix.writeFileAtomically(bytes, to: path)
    }

    /// The canonical absolute path, so "the output would overwrite the input" is detected through symlinks.
    static func canonical(_ path: String) -> String { Posix.canonicalPath(path) }
}
