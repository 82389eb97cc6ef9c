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

    /// Touched every minute while this replica runs: how other replicas tell it is still there.
    var aliveFile: String { String(file.dropLast(".jsonl".count)) + ".alive" }
    /// A replica whose alive file (or, from versions without one, its records) has not changed for this
    /// long by the storage's clock is gone: every pod restart is a new name.
    static let goneAfter = 3_600

    init(directory: String, replica: String) throws(SystemError) {
        self.directory = directory
        try Posix.makeDirectories(directory, mode: 0o750)
        file = directory + "/fetches-\(replica).jsonl"
    }

    func markAlive() {
        if !Posix.touch(aliveFile) { _ = try? Posix.createExclusively([], at: aliveFile, mode: 0o640) }
    }

    /// Folds the records of replicas that are gone into this replica's file and removes theirs, so the
    /// directory holds about `fileLimit × (keptFiles + 1)` bytes per running replica, not per replica that
    /// ever ran. Returns the replicas merged.
    func compact() -> [String] {
        guard let now = Posix.storageTime(directory) else { return [] }
        let names = Posix.directoryEntries(directory) ?? []
        let mine = String(file.dropFirst(directory.count + 1))
        var merged: [String] = []
        for name in names where name.hasPrefix("fetches-") && name.hasSuffix(".jsonl") && name != mine {
            let base = directory + "/" + name
            let alive = String(base.dropLast(".jsonl".count)) + ".alive"
            guard let seen = Posix.modificationTime(alive) ?? Posix.modificationTime(base), now - seen > Self.goneAfter else { continue }
            // Oldest rotation first, as they were written; the reader drops repeats.
            let files = stride(from: Self.keptFiles, through: 1, by: -1).map { base + ".\($0)" } + [base]
            for path in files {
                guard let bytes = try? Posix.readFile(path, limit: Self.fileLimit * 2) else { continue }
                var start = 0
                while start < bytes.count {
                    // Whole lines, in pieces that fit a file.
                    var end = min(bytes.count, start + Self.fileLimit / 2)
                    while end < bytes.count && bytes[end - 1] != 0x0A { end += 1 }
                    try? appendRaw(Array(bytes[start..<end]))
                    start = end
                }
            }
            for path in files + [alive] { Posix.removeFile(path) }
            merged.append(String(name.dropFirst("fetches-".count).dropLast(".jsonl".count)))
        }
        return merged
    }

    private func appendRaw(_ bytes: [UInt8]) throws(SystemError) {
        if let size = Posix.fileSize(file), size + bytes.count > Self.fileLimit { try rotate() }
        try Posix.appendToFile(bytes, at: file, mode: 0o640)
    }

    /// Appends the entries as lines; turns the file over first when it is full.
    func append(_ entries: [RecordLine.Entry]) throws(SystemError) {
        guard !entries.isEmpty else { return }
        var bytes: [UInt8] = []
        for entry in entries { bytes += RecordLine.line(entry) }
        try appendRaw(bytes)
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
