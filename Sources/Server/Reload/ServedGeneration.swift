public import AASA
import Posix

/// What is served now, as one value: the config as loaded (the next load takes its unchanged sites over),
/// the prepared responses, certificates and admin policy the event loops answer from, and the settings in
/// force. ``ServerState`` holds the current one and swaps it atomically; nothing else keeps a "previous".
/// Built only by ``Generation/next(from:candidate:)``.
public final class ServedGeneration: Sendable {
    /// 1 for the first load, one more for every reload that took effect.
    public let number: Int
    public let config: LoadedConfig
    let snapshot: Snapshot
    /// The effective settings in force: a reload applies what it can (``SettingsReload``); the rest keeps
    /// the value the server started with.
    public let settings: ServerSettings
    let certificateFingerprint: UInt64?
    /// The config, every hosted document, certificate and key, and the admin token: watched for changes.
    let files: [String]
    /// How long loading this generation took.
    let loadMicroseconds: Int
    /// Config keys whose new values wait for a restart (empty for the first generation).
    let needsRestart: [String]
    /// The certificates differ from the previous generation's.
    let certificatesReplaced: Bool
    /// The hosts ACME obtains certificates for (no certificate file covers them).
    let acmeHosts: [String]

    init(
        number: Int,
        config: LoadedConfig,
        snapshot: Snapshot,
        settings: ServerSettings,
        certificateFingerprint: UInt64?,
        files: [String],
        loadMicroseconds: Int,
        needsRestart: [String],
        certificatesReplaced: Bool,
        acmeHosts: [String] = []
    ) {
        self.number = number
        self.config = config
        self.snapshot = snapshot
        self.settings = settings
        self.certificateFingerprint = certificateFingerprint
        self.files = files
        self.loadMicroseconds = loadMicroseconds
        self.needsRestart = needsRestart
        self.certificatesReplaced = certificatesReplaced
        self.acmeHosts = acmeHosts
    }
}

/// A load that cannot be served; the generation in force keeps serving.
public struct RejectedReload: Error, Sendable {
    /// The generation that keeps serving (0 when there is none yet).
    public var generation: Int
    /// The errors, at most ten, in the order they are displayed.
    public var errors: [Diagnostic]

    /// The config file itself could not be read.
    static func unreadable(_ serving: ServedGeneration) -> (FileError) -> RejectedReload {
        { error in
            RejectedReload(
                generation: serving.number,
                errors: [Diagnostic(.error, "file.unreadable", "cannot read \(error.path): \(error.message)", file: error.path)]
            )
        }
    }
}
