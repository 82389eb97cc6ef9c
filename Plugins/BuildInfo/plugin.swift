import Foundation
import PackagePlugin

/// Generates the build's commit into the CLI target (`--version`). It reruns when the checkout's HEAD
/// or the branch it points at moves, which a manifest-time value could not (SwiftPM caches manifests).
/// It also compiles config/example.json in, as the config `serve` uses when none is given: an installed
/// binary runs anywhere, and the file in the repository stays the one copy.
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift")
        let git = context.package.directoryURL.appending(path: ".git")
        // The files whose change means another commit: HEAD, the branch it names, packed refs. Only
        // existing ones (an exported tree has no .git: the commit is then "unknown").
        var inputs = [git.appending(path: "HEAD"), git.appending(path: "packed-refs")]
        if let head = try? String(contentsOf: git.appending(path: "HEAD"), encoding: .utf8), head.hasPrefix("ref: ") {
            let reference = head.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)
            inputs.append(git.appending(path: reference))
        }
        inputs = inputs.filter { FileManager.default.fileExists(atPath: $0.path) }
        let override = ProcessInfo.processInfo.environment["AASA_BUILD_COMMIT"] ?? ""
        let example = context.package.directoryURL.appending(path: "config/example.json")
        let embedded = context.pluginWorkDirectoryURL.appending(path: "BuiltInConfigText.swift")
        let generator = try context.tool(named: "BuildInfoGenerator").url
        return [
            .buildCommand(
                displayName: "Compiling in config/example.json",
                executable: generator,
                arguments: ["--embed", example.path, embedded.path, "builtInConfigText"],
                inputFiles: [example],
                outputFiles: [embedded]
            ),
            .buildCommand(
                displayName: "Recording the commit for --version",
                executable: generator,
                arguments: [context.package.directoryURL.path, output.path, override],
                inputFiles: inputs,
                outputFiles: [output]
            ),
        ]
    }
}
