import AASA

/// An app named on the command line (`validate --app`, `match --expect`): an app ID, or a name from the
/// config's apps table, resolved the same way everywhere.
enum AppArgument {
    /// The app ID `given` stands for; a usage message when it is neither an app ID nor a name of the config.
    static func resolve(_ given: String, option: String, config: LoadedConfig?) -> Result<String, UsageError> {
        if let id = config?.config?.appTable.apple[given] { return .success(id) }
        var malformed = false
        AASAValidator.validateAppID(Located(given)) { _, rule, _, _ in if rule == "appid.format" { malformed = true } }
        guard malformed else { return .success(given) }
        let names = config?.config?.appTable.apple.keys.sorted() ?? []
        return .failure(
            UsageError(
                "\(option) \(given): not an app ID (TEAMID.bundle.id)"
                    + (names.isEmpty ? "" : " nor an app name of the config (\(names.joined(separator: ", ")))")
            )
        )
    }
}
