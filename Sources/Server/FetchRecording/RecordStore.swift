public import FetchRecords
import Posix

/// The state directory's fetch records on disk: one append-only file of JSON lines per replica, turned
/// over when it reaches ``fileLimit`` (the last ``keptFiles`` are kept, so a replica holds at most
/// `fileLimit × (keptFiles + 1)` bytes). Used by the supervisor thread only: never on an event loop.
///
/// Several replicas may share the directory (a shared volume): each appends to its own file, named
/// after its host name and process, and every replica reads them all on start.
public final class RecordStore {
    static let fileLimit = 4 << 20
    static let keptFiles = 3
    let directory: String
    let file: String

    init(directory: String, replica: String) throws(SystemError) {
        self.directory = directory
        try Posix.makeDirectories(directory, mode: 0o750)
        file = directory + "/fetches-\(replica).jsonl"
    }

    /// Appends the entries as lines; turns the file over first when it is full.
    func append(_ entries: [RecordLine.Entry]) throws(SystemError) {
        guard !entries.isEmpty else { return }
        var bytes: [UInt8] = []
        for entry in entries { bytes += RecordLine.line(entry) }
        if let size = Posix.fileSize(file), size + bytes.count > Self.fileLimit { try rotate() }
        try Posix.appendToFile(bytes, at: file, mode: 0o640)
    }

    private func rotate() throws(SystemError) {
        Posix.removeFile(file + ".\(Self.keptFiles)")
        for generation in stride(from: Self.keptFiles - 1, through: 1, by: -1) where Posix.fileExists(file + ".\(generation)") {
            try Posix.renameFile(file + ".\(generation)", to: file + ".\(generation + 1)")
        }
        try Posix.renameFile(file, to: file + ".1")
    }

    /// Every record in a directory (all replicas' files, oldest rotation first), and a warning for each
    /// file with damaged lines or that cannot be read. Never fails: a damaged record is skipped.
    public static func read(directory: String, limit: Int, maxHosts: Int = Int.max) -> (ledger: FetchLedger, warnings: [String]) {
        var ledger = FetchLedger(limit: limit, maxHosts: maxHosts)
        var warnings: [String] = []
        let names = (Posix.directoryEntries(directory) ?? []).filter { $0.hasPrefix("fetches-") && $0.contains(".jsonl") }
        // Older rotations first, so the newest records are the ones a bounded history keeps.
        let ordered = names.sorted { rotation($0) != rotation($1) ? rotation($0) > rotation($1) : $0 < $1 }
        for name in ordered {
            let path = directory + "/" + name
            do throws(FileError) {
                let bytes = try Posix.readFile(path, limit: fileLimit * 2)
                let parsed = RecordLine.parseAll(bytes)
                RecordLine.apply(parsed.entries, to: &ledger)
                if parsed.damaged > 0 {
                    warnings.append("\(path): skipped \(parsed.damaged) damaged record line\(parsed.damaged == 1 ? "" : "s")")
                }
            } catch {
                warnings.append("\(path): not read (\(error.message)); its records are skipped")
            }
        }
        return (ledger, warnings)
    }

    private static func rotation(_ name: String) -> Int {
        guard let dot = name.lastIndex(of: "."), let number = Int(name[name.index(after: dot)...]) else { return 0 }
        return number
    }
}
