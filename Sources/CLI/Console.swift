import AASA
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where the CLI writes: results to stdout, diagnostics and logs to stderr (STYLE: CLI output).
///
/// Tests substitute a capturing console, so subcommands run in-process without touching the terminal.
public protocol Console: AnyObject {
    func out(_ text: String)
    func outBytes(_ bytes: [UInt8])
    func err(_ text: String)
    /// Colour is used only when stderr is a terminal and never with `--json`.
    var stderrIsTerminal: Bool { get }
}

public final class StandardConsole: Console {
    public init() {}

    public func out(_ text: String) { outBytes(Array(text.utf8)) }

    public func outBytes(_ bytes: [UInt8]) { FileHandle.standardOutput.write(Data(bytes)) }

    public func err(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

    public var stderrIsTerminal: Bool { isatty(2) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil }
}

/// Reads files for the pure library (which takes a reader closure) and writes generated output.
enum Files {
    static func read(_ path: String) -> Result<[UInt8], FileReadError> {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return .failure(FileReadError("no such file"))
        }
        if isDirectory.boolValue { return .failure(FileReadError("it is a directory")) }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path)
        else {
            return .failure(FileReadError("permission denied"))
        }
        return .success([UInt8](data))
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    static func readErrorMessage(_ path: String) -> String {
        if case .failure(let error) = read(path) { return error.message }
        return "unknown error"
    }

    /// Reads a file the user named on the command line; on failure says why on stderr and returns nil
    /// (the caller exits with the usage status).
    static func readArgument(_ path: String, console: any Console) -> [UInt8]? {
        switch read(path) {
        case .success(let bytes): return bytes
        case .failure(let error):
            console.err("error: cannot read \"\(path)\": \(error.message)\n")
            return nil
        }
    }

    /// Writes through a temporary file and a rename, so a reader never sees half a file.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// The canonical absolute path, so "the output would overwrite the input" is detected through symlinks.
    static func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
