import Foundation
import TestSupport
import Testing

@testable import CLI

/// Completions and the man page come from the option table the parser uses: loaded into the real shells
/// and checked by Debian's own man page tools.
@Suite("Shell completions and the man page")
final class CompletionTests {
    static func installed(_ tool: String) -> Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool) }
    /// Where this test's script went, removed when it ends (a new instance runs each test).
    private var directory: String?

    deinit {
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    func script(_ shell: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-completion-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        let result = try runTool([TestPaths.serverExecutable, "completions", shell])
        #expect(result.status == 0, "\(result.stderr)")
        let path = directory + "/" + (shell == "zsh" ? "_aasa-server" : "aasa-server.\(shell)")
        try Data(result.stdout).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("Every option the parser accepts is described in its command's help, and in the table")
    func everyOptionDescribed() throws {
        let table = OptionTable(CommandLineTool.subcommands)
        #expect(table.commands.count == CommandLineTool.subcommands.count)
        for command in table.commands {
            for option in command.options {
                #expect(!option.summary.isEmpty, "\(command.name) \(option.name) has no line in its --help")
                if option.takesValue {
                    #expect(!option.valueName.isEmpty, "\(command.name) \(option.name): its value has no name in --help")
                }
            }
        }
        #expect(try runTool([TestPaths.serverExecutable, "completions", "tcsh"]).status == 2)
    }

    @Test("bash: commands, a command's options and file names for --config", .enabled(if: installed("bash")))
    func bash() throws {
        let path = try script("bash")
        func complete(_ words: [String]) throws -> [String] {
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let run = try runTool(
                [
                    "bash", "-c",
                    "source '\(path)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _aasa_server; printf '%s\\n' \"${COMPREPLY[@]}\"",
                ],
                directory: repositoryRoot + "/config"
            )
            #expect(run.status == 0, "\(run.stderr)")
            return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        #expect(try complete(["aasa-server", "se"]) == ["serve"])
        #expect(try complete(["aasa-server", "c"]).sorted() == ["certificates", "check", "completions"])
        #expect(try complete(["aasa-server", "serve", "--li"]) == ["--listen", "--listen-tls"])
        #expect(try complete(["aasa-server", "generate", "--allow"]) == ["--allow-unknown"])
        #expect(try complete(["aasa-server", "validate", "--config", "ex"]).sorted() == ["example.json", "examples"])
        #expect(try complete(["aasa-server", "completions", ""]).sorted() == ["bash", "fish", "zsh"])
        #expect(try complete(["aasa-server", "help", "ini"]) == ["init"])
    }

    @Test("fish: commands with their descriptions, options of the command given", .enabled(if: installed("fish")))
    func fish() throws {
        let path = try script("fish")
        func complete(_ line: String) throws -> [String] {
            let run = try runTool(["fish", "--no-config", "-c", "source '\(path)'; complete -C'\(line)'"])
            #expect(run.status == 0, "\(run.stderr)")
            return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
        }
        #expect(try complete("aasa-server ser") == ["serve"])
        #expect(try complete("aasa-server match --ex") == ["--expect"])
        #expect(try complete("aasa-server init --web") == ["--webcredentials"])
        #expect(try complete("aasa-server serve --allow").isEmpty, "--allow-unknown is generate's")
    }

    @Test("zsh: a command and an option completed at the prompt (compinit, zpty)", .enabled(if: installed("zsh")))
    func zsh() throws {
        let path = try script("zsh")
        let directory = (path as NSString).deletingLastPathComponent
        func complete(_ line: String) throws -> String {
            let driver = """
                zmodload zsh/zpty
                zpty z 'zsh -f -i'
                zpty -w z 'PS1="%% "; fpath=(\(directory) $fpath); autoload -U compinit; compinit -u -D; zstyle ":completion:*" menu no'
                zpty -w -n z $'\(line)\\t'
                sleep 2
                out=""
                while zpty -r -t z chunk; do out+=$chunk; done
                print -r -- "$out"
                zpty -d z
                """
            let run = try runTool(["zsh", "-f", "-c", driver], timeout: 15)
            return String(decoding: run.stdout, as: UTF8.self)
        }
        #expect(try complete("aasa-server ser").contains("aasa-server serve"))
        #expect(try complete("aasa-server serve --check-c").contains("aasa-server serve --check-config"))
        #expect(try complete("aasa-server generate --allow-u").contains("--allow-unknown"))
    }

    @Test("The man page: every command and option, and no warning from mandoc -Tlint or man --warnings")
    func manPage() throws {
        let result = try runTool([TestPaths.serverExecutable, "manpage"])
        #expect(result.status == 0)
        let page = String(decoding: result.stdout, as: UTF8.self)
        #expect(page.hasPrefix(".TH AASA-SERVER 1 "))
        for command in OptionTable(CommandLineTool.subcommands).commands {
            #expect(page.contains(".SS \(command.name)\n"), "\(command.name)")
            for option in command.options {
                #expect(page.contains(".B " + option.name.replacingOccurrences(of: "-", with: "\\-")), "\(command.name) \(option.name)")
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-server-\(UUID().uuidString).1").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(result.stdout).write(to: URL(fileURLWithPath: file))
        if Self.installed("mandoc") {
            let lint = try runTool(["mandoc", "-Tlint", "-W", "warning", file])
            #expect(lint.status == 0 && lint.stdout.isEmpty && lint.stderr.isEmpty, "\(String(decoding: lint.stdout, as: UTF8.self))")
        }
        if Self.installed("man") {
            let man = try runTool(["man", "--warnings", "-l", file])
            #expect(man.status == 0 && man.stderr.isEmpty, "\(man.stderr)")
            #expect(String(decoding: man.stdout, as: UTF8.self).contains("aasa-server - host, generate and check"))
        }
    }
}
