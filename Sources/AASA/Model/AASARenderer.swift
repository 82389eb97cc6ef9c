/// Turns an ``AASADocument`` into canonical JSON.
///
/// Key order is fixed (services in Apple's documentation order; within an entry the app first, then
/// defaults, then rules; within a component `/ ? #` then flags) so the bytes, and so the ETag, depend
/// only on the content.
public enum AASARenderer {
    public static func render(_ document: AASADocument) -> JSONOutput {
        var members: [(String, JSONOutput)] = []
        if let applinks = document.applinks { members.append(("applinks", render(applinks))) }
        if let service = document.webcredentials { members.append(("webcredentials", render(service))) }
        if let service = document.appclips { members.append(("appclips", render(service))) }
        if let service = document.activitycontinuation { members.append(("activitycontinuation", render(service))) }
        return .object(members)
    }

    public static func bytes(_ document: AASADocument, pretty: Bool = false) -> [UInt8] {
        JSONWriter.bytes(render(document), pretty: pretty)
    }

    static func render(_ applinks: AppLinks) -> JSONOutput {
        var members: [(String, JSONOutput)] = []
        if let apps = applinks.apps { members.append(("apps", .array(apps.map { .string($0.value) }))) }
        if !applinks.defaults.isEmpty { members.append(("defaults", render(applinks.defaults))) }
        if !applinks.substitutionVariables.isEmpty {
            members.append(
                (
                    "substitutionVariables",
                    .object(applinks.substitutionVariables.map { ($0.name, .array($0.values.map { .string($0.value) })) })
                )
            )
        }
        members.append(("details", .array(applinks.details.map(render))))
        return .object(members)
    }

    static func render(_ details: AppLinksDetails) -> JSONOutput {
        var members: [(String, JSONOutput)] = []
        if let appIDs = details.appIDs { members.append(("appIDs", .array(appIDs.map { .string($0.value) }))) }
        if let appID = details.appID { members.append(("appID", .string(appID.value))) }
        if !details.defaults.isEmpty { members.append(("defaults", render(details.defaults))) }
        if let components = details.components { members.append(("components", .array(components.map(render)))) }
        if let paths = details.paths { members.append(("paths", .array(paths.map { .string($0.value) }))) }
        return .object(members)
    }

    static func render(_ component: Component) -> JSONOutput {
        var members: [(String, JSONOutput)] = []
        if let path = component.path { members.append(("/", .string(path))) }
        switch component.query {
        case .whole(let pattern): members.append(("?", .string(pattern)))
        case .items(let items): members.append(("?", .object(items.map { ($0.name, .string($0.pattern)) })))
        case nil: break
        }
        if let fragment = component.fragment { members.append(("#", .string(fragment))) }
        if component.exclude { members.append(("exclude", .bool(true))) }
        if let flag = component.options.caseSensitive { members.append(("caseSensitive", .bool(flag))) }
        if let flag = component.options.percentEncoded { members.append(("percentEncoded", .bool(flag))) }
        if let comment = component.comment { members.append(("comment", .string(comment))) }
        return .object(members)
    }

    static func render(_ options: MatchOptions) -> JSONOutput {
        var members: [(String, JSONOutput)] = []
        if let flag = options.caseSensitive { members.append(("caseSensitive", .bool(flag))) }
        if let flag = options.percentEncoded { members.append(("percentEncoded", .bool(flag))) }
        return .object(members)
    }

    static func render(_ service: ServiceApps) -> JSONOutput {
        .object([("apps", .array(service.apps.map { .string($0.value) }))])
    }
}
