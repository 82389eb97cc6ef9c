import AASA
import Posix
import Support

extension AdminPolicy {
    /// The admin listener's policy for `settings`: the token from `adminTokenFile` (at least 16 printable
    /// characters, surrounding whitespace ignored), read-only when exposed without one.
    static func read(
        _ settings: ServerSettings,
        configPath: String,
        readFile: GenerationInputs.FileReader
    ) -> (policy: AdminPolicy, diagnostics: [Diagnostic], files: [String]) {
        guard let name = settings.adminTokenFile else {
            return (AdminPolicy(token: nil, readOnly: settings.adminExposed), [], [])
        }
        let file = ConfigLoader.resolve(name, relativeTo: configPath)
        func refuse(_ message: String) -> (policy: AdminPolicy, diagnostics: [Diagnostic], files: [String]) {
            (AdminPolicy(token: nil, readOnly: true), [Diagnostic(.error, "server.admin-token", message, file: file)], [file])
        }
        let bytes: [UInt8]
        switch readFile(file, 4096) {
        case .success(let read): bytes = read
        case .failure(let error): return refuse("cannot read the admin token: \(error.message)")
        }
        let token = bytes[...].trimmingASCIIWhitespace()
        guard token.count >= 16, token.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return refuse("the admin token must be at least 16 printable characters without spaces (e.g. `openssl rand -hex 32`)")
        }
        return (AdminPolicy(token: Array(token), readOnly: false), [], [file])
    }
}
