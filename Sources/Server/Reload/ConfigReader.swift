public import AASA
public import Posix

/// The file system behind ``GenerationInputs``: the one way every subcommand reads a config (`serve`,
/// `dev`, `validate`, `generate`, `match`, `check --config`). Stateless: each call reads afresh, and what a
/// reload takes over comes from the generation in force, not from here.
public enum ConfigReader {
    /// How included files are found and told apart between reloads.
    public static let includeAccess = IncludeAccess(
        list: { Posix.directoryEntries($0) },
        stamp: { Posix.fileStamp($0) }
    )

    /// Reads a referenced file (a document, certificate, key or token), refusing special files and
    /// anything over `limit`.
    public static let readFile: GenerationInputs.FileReader = { path, limit in
        do throws(FileError) {
            return .success(try Posix.readFile(path, limit: limit))
        } catch {
            return .failure(FileReadError(error.message))
        }
    }

    /// The inputs for the config at `path`, read now; `contents` stands in for the file when the config
    /// came from elsewhere (standard input), `path` then only naming it. The error when the config file
    /// itself cannot be read.
    public static func inputs(
        path: String,
        contents: [UInt8]? = nil,
        certificates: CertificateSupply,
        options: GenerationOptions = GenerationOptions()
    ) -> Result<GenerationInputs, FileError> {
        let bytes: [UInt8]
        if let contents {
            bytes = contents
        } else {
            do {
                bytes = try Posix.readFile(path, limit: Posix.ReadLimit.config)
            } catch {
                return .failure(error)
            }
        }
        return .success(
            GenerationInputs(
                configPath: path,
                configBytes: bytes,
                readFile: readFile,
                includes: includeAccess,
                certificates: certificates,
                options: options,
                now: Posix.unixTime()
            )
        )
    }
}
