import AASA
import Posix

/// Notices changes to the config's files: inotify on their directories, or polling their fingerprints
/// where inotify is unavailable or `"watch": "poll"` asks for it. Follows `reload.watch` and
/// `reload.pollSeconds` when a reload changes them.
struct FileWatch {
    private var files: [String]
    private var settings: ServerSettings
    private var watcher: FileWatcher?
    private var fingerprint: Fingerprint
    private var nextPoll: Int64

    init(files: [String], settings: ServerSettings) {
        self.files = files
        self.settings = settings
        fingerprint = Fingerprint(files: files, matches: Glob.matches)
        nextPoll = 0
        watcher = nil
        configure(announce: true)
    }

    private mutating func configure(announce: Bool) {
        watcher = settings.watchFiles && !settings.forcePolling ? FileWatcher(files: files, matches: Glob.matches) : nil
        nextPoll = Posix.monotonicMilliseconds() + Int64(settings.pollInterval * 1000)
        if announce && settings.watchFiles && watcher == nil && !files.isEmpty {
            Log.info(
                (settings.forcePolling ? "polling" : "inotify is unavailable; checking")
                    + " the config files every \(settings.pollInterval) s"
            )
        }
    }

    var descriptors: [Int32] { watcher.map { [$0.fd] } ?? [] }

    /// When a watched file changed: how long to wait before reloading. inotify events come in bursts
    /// (editors and deploy tools write several times), so they are debounced; a poll that found a
    /// difference reloads at once (the files already settled for a whole poll interval).
    mutating func changed(readable: [Int32], now: Int64) -> Int64? {
        if let watcher {
            return readable.contains(watcher.fd) && watcher.drain() ? 200 : nil
        }
        guard settings.watchFiles, !files.isEmpty, now >= nextPoll else { return nil }
        nextPoll = now + Int64(settings.pollInterval * 1000)
        return Fingerprint(files: files, matches: Glob.matches) != fingerprint ? 0 : nil
    }

    /// After a reload: the files the new config reads, and its watch settings.
    mutating func update(files newFiles: [String], settings newSettings: ServerSettings) {
        let modeChanged =
            newSettings.watchFiles != settings.watchFiles || newSettings.forcePolling != settings.forcePolling
            || newSettings.pollInterval != settings.pollInterval
        let filesChanged = newFiles != files
        files = newFiles
        settings = newSettings
        if modeChanged || filesChanged { configure(announce: modeChanged) }
    }

    /// What the files are now, so a poll compares against the state the last reload read.
    mutating func rememberCurrentFiles() { fingerprint = Fingerprint(files: files, matches: Glob.matches) }
}
