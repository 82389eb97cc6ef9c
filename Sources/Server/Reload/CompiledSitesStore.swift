public import AASA
import Posix
import Synchronization

/// Where `serve` keeps its snapshot of the included files' sites (``CompiledSites``): read by the first
/// load, written again in the background after a load that had to build files from their bytes — never
/// by the thread that serves or reloads, and never holding the whole snapshot in memory.
public final class CompiledSitesStore: Sendable {
    /// The binary and its build: a snapshot another binary wrote restores nothing.
    let build: String
    private struct State {
        var writing = false
        /// The newest config waiting while a write runs (older ones are superseded, never written).
        var waiting: (config: LoadedConfig, configPath: String, stateDirectory: String)?
        /// The hosted documents checked by a load and kept by the last snapshot asked for: a reload that
        /// checked no other has nothing new to keep.
        var keptDocuments: Set<CompiledSites.Digest> = []
    }
    private let state = Mutex(State())

    /// `identity`: the version and commit; the executable's own size and time are added, so a rebuild
    /// from the same commit with other changes does not trust its predecessor's snapshot.
    public init(identity: String) {
        build = identity + " " + (Posix.fileStamp("/proc/self/exe") ?? "")
    }

    /// What a load is given: this build, and the state directory's snapshot when there is a valid one.
    public var input: CompiledSites.Input {
        CompiledSites.Input(build: build, compress: { PreparedDocument.gzipForm($0) ?? [] }, read: Self.read)
    }

    /// The snapshot in `directory`, when there is one this build can trust; what was wrong in the log.
    private static func read(_ directory: String) -> CompiledSites? {
        let path = directory + "/" + CompiledSites.fileName
        guard Posix.fileExists(path) else { return nil }
        let started = Posix.monotonicMilliseconds()
        guard let mapped = try? MappedFile(path) else {
            Log.warning("\(path): cannot be read; every included file is built from its bytes, and it is written again")
            return nil
        }
        guard let snapshot = CompiledSites.decode(mapped.buffer, owner: mapped) else {
            Log.warning(
                "\(path): damaged or written by another version of the format; ignored (every included file is built and every "
                    + "hosted document checked from its bytes) and written again"
            )
            return nil
        }
        Log.info(
            "\(path): a snapshot of \(snapshot.fileCount) included files and \(snapshot.documentCount) hosted documents, read in "
                + "\(Posix.monotonicMilliseconds() - started) ms"
        )
        return snapshot
    }

    /// After a load: when it built any included file from its bytes or checked a hosted document not kept
    /// yet, the snapshot is to be written again, on a thread of its own that ``writeWaiting()`` starts once
    /// the load's snapshot is published and its gzip forms are made (``PendingGzipForms``): the write keeps
    /// those forms without compressing again.
    public func keep(_ config: LoadedConfig, configPath: String) {
        guard let directory = config.config?.server.stateDirectory else { return }
        let checked = config.checkedHostedDocuments
        let stateDirectory = ConfigLoader.resolve(directory, relativeTo: configPath)
        state.withLock { state in
            guard config.parsedIncludedFiles > 0 || !checked.isSubset(of: state.keptDocuments) else { return }
            state.keptDocuments = checked
            state.waiting = (config, configPath, stateDirectory)
        }
    }

    /// Starts writing what ``keep(_:configPath:)`` left waiting, unless a write is running (it
    /// takes the waiting config when it is done).
    public func writeWaiting() {
        let start = state.withLock { state in
            if state.writing || state.waiting == nil { return false }
            state.writing = true
            return true
        }
        guard start else { return }
        do {
            try Posix.Thread { [self] in
                // Spare CPU only: the event loops keep theirs.
                Posix.lowerCurrentThreadPriority()
                while let next = state.withLock({ state in
                    defer { state.waiting = nil }
                    if state.waiting == nil { state.writing = false }
                    return state.waiting
                }) {
                    write(next.config, configPath: next.configPath, to: next.stateDirectory)
                }
                // Its code and buffers are not needed again until the next write.
                OneOffWork.end()
            }.detach()
        } catch {
            state.withLock { $0.writing = false }
            Log.warning("the compiled-sites snapshot is not written: \(error)")
        }
    }

    /// Writes the snapshot now (the background thread's work; tests call it directly).
    func write(_ config: LoadedConfig, configPath: String, to stateDirectory: String) {
        let started = Posix.monotonicMilliseconds()
        let path = stateDirectory + "/" + CompiledSites.fileName
        guard let parts = CompiledSites.encode(config, configPath: configPath, build: build, servingOnly: true) else {
            // Nothing it can restore: an old snapshot would only be read and ignored at the next start.
            if Posix.fileExists(path) { Posix.removeFile(path) }
            return
        }
        do {
            try Posix.writeFileAtomically(parts: parts, to: path, mode: 0o600)
            Log.info(
                "\(path): the included files' sites and hosted documents kept for the next start (\(Posix.monotonicMilliseconds() - started) ms)"
            )
        } catch {
            Log.warning("\(path): not written (\(error)); the next start builds every included file from its bytes")
        }
    }
}
