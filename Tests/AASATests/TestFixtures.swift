import Foundation
import TestSupport

/// Paths into the repository, found from this source file, so tests read fixtures and the bundled
/// configs exactly as they are checked in.
enum Fixtures {
    static let repositoryRoot = TestPaths.repositoryRoot

    static let corpusDirectory = repositoryRoot + "/Tests/AASATests/Fixtures/real-aasa"

    struct Missing: Error { var path: String }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw Missing(path: path) }
        return [UInt8](data)
    }
}
