import AASA
import Posix
import Support

extension AdminPolicy {
    /// The admin listener's policy for `settings`: the tokens from `adminTokenFile` and
    /// `linkAPI.tokenFile` (each at least 16 printable characters, surrounding whitespace ignored),
    /// read-only when exposed without an admin token.
    static func read(
        _ settings: ServerSettings,
        configPath: String,
        readFile: GenerationInputs.FileReader
    ) -> (policy: AdminPolicy, diagnostics: [Diagnostic], files: [String]) {
        var diagnostics: [Diagnostic] = []
        var files: [String] = []
        /// A token file's token; nil (and the error said) when it cannot be read or is too weak.
        func token(_ name: String, what: String) -> [UInt8]? {
            let file = ConfigLoader.resolve(name, relativeTo: configPath)
            files.append(file)
            func refuse(_ message: String) -> [UInt8]? {
                diagnostics.append(Diagnostic(.error, "server.admin-token", message, file: file))
                return nil
            }
            let bytes: [UInt8]
            switch readFile(file, 4096) {
            case .success(let read): bytes = read
            case .failure(let error): return refuse("cannot read the \(what): \(error.message)")
            }
            let token = bytes[...].trimmingASCIIWhitespace()
            guard token.count >= 16, token.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                return refuse("the \(what) must be at least 16 printable characters without spaces (e.g. `openssl rand -hex 32`)")
            }
            return Array(token)
        }
        let linkAPIToken = settings.linkAPITokenFile.flatMap { token($0, what: "link API token") }
        guard let name = settings.adminTokenFile else {
            return (AdminPolicy(token: nil, linkAPIToken: linkAPIToken, readOnly: settings.adminExposed), diagnostics, files)
        }
        guard let adminToken = token(name, what: "admin token") else {
            return (AdminPolicy(token: nil, linkAPIToken: linkAPIToken, readOnly: true), diagnostics, files)
        }
        return (AdminPolicy(token: adminToken, linkAPIToken: linkAPIToken, readOnly: false), diagnostics, files)
    }
}
