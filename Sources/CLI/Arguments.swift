import AASA

/// A usage mistake: printed as one line plus the usage, exit status 2.
public struct UsageError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a subcommand accepts: options with a value, flags, and positional arguments.
struct ArgumentSpec: Sendable {
    var options: [String] = []
    var repeatableOptions: [String] = []
    var flags: [String] = []
    var positionalName: String?
}

/// Parsed arguments: `--name value` / `--name=value` options, `--flag`s, positionals; `--` ends options.
struct ParsedArguments {
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    init(_ arguments: [String], spec: ArgumentSpec) throws(UsageError) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                guard spec.positionalName != nil else {
                    throw UsageError("unexpected argument '\(argument)'")
                }
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if spec.flags.contains(name) {
                if inlineValue != nil { throw UsageError("flag '\(name)' takes no value") }
                flags.insert(name)
            } else if spec.options.contains(name) || spec.repeatableOptions.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError("option '\(name)' needs a value") }
                    value = arguments[index]
                    index += 1
                }
                if values[name] != nil && !spec.repeatableOptions.contains(name) {
                    throw UsageError("option '\(name)' given more than once")
                }
                values[name, default: []].append(value)
            } else {
                let known = spec.options + spec.repeatableOptions + spec.flags + ["--help"]
                let suggestion = closestMatch(to: name, in: known)
                throw UsageError("unknown option '\(name)'" + (suggestion.map { "; did you mean '\($0)'?" } ?? ""))
            }
        }
    }

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}
