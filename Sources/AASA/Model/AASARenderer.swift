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
        if pretty { return JSONWriter.bytes(render(document), pretty: true) }
        var writer = CompactJSONWriter()
        write(document, to: &writer)
        return writer.bytes
    }

    /// The compact bytes as a served document, copied once from the writer's buffer.
    static func immutableBytes(_ document: AASADocument) -> ImmutableBytes {
        var writer = CompactJSONWriter()
        write(document, to: &writer)
        return writer.withBytes { ImmutableBytes.copy($0) }
    }

    // MARK: - Compact bytes, written directly (the same bytes as rendering, then writing)

    static func write(_ document: AASADocument, to writer: inout CompactJSONWriter) {
        writer.openObject()
        if let applinks = document.applinks {
            writer.key("applinks")
            write(applinks, to: &writer)
        }
        write("webcredentials", document.webcredentials, to: &writer)
        write("appclips", document.appclips, to: &writer)
        write("activitycontinuation", document.activitycontinuation, to: &writer)
        writer.closeObject()
    }

    private static func write(_ name: StaticString, _ service: ServiceApps?, to writer: inout CompactJSONWriter) {
        guard let service else { return }
        writer.key(name)
        writer.openObject()
        writer.key("apps")
        write(service.apps, to: &writer)
        writer.closeObject()
    }

    static func write(_ applinks: AppLinks, to writer: inout CompactJSONWriter) {
        writer.openObject()
        if let apps = applinks.apps {
            writer.key("apps")
            write(apps, to: &writer)
        }
        if !applinks.defaults.isEmpty {
            writer.key("defaults")
            write(applinks.defaults, to: &writer)
        }
        if !applinks.substitutionVariables.isEmpty {
            writer.key("substitutionVariables")
            writer.openObject()
            for variable in applinks.substitutionVariables {
                writer.key(text: variable.name)
                writer.strings(variable.values.lazy.map(\.value))
            }
            writer.closeObject()
        }
        writer.key("details")
        writer.openArray()
        for details in applinks.details { write(details, to: &writer) }
        writer.closeArray()
        writer.closeObject()
    }

    static func write(_ details: AppLinksDetails, to writer: inout CompactJSONWriter) {
        writer.openObject()
        if let appIDs = details.appIDs {
            writer.key("appIDs")
            write(appIDs, to: &writer)
        }
        if let appID = details.appID {
            writer.key("appID")
            writer.string(appID.value)
        }
        if !details.defaults.isEmpty {
            writer.key("defaults")
            write(details.defaults, to: &writer)
        }
        if let components = details.components {
            writer.key("components")
            writer.openArray()
            for component in components { write(component, to: &writer) }
            writer.closeArray()
        }
        if let paths = details.paths {
            writer.key("paths")
            write(paths, to: &writer)
        }
        writer.closeObject()
    }

    static func write(_ component: Component, to writer: inout CompactJSONWriter) {
        writer.openObject()
        writer.member("/", string: component.path)
        switch component.query {
        case .whole(let pattern):
            writer.key("?")
            writer.string(pattern)
        case .items(let items):
            writer.key("?")
            writer.openObject()
            for item in items {
                writer.key(text: item.name)
                writer.string(item.pattern)
            }
            writer.closeObject()
        case nil: break
        }
        writer.member("#", string: component.fragment)
        if component.exclude {
            writer.key("exclude")
            writer.bool(true)
        }
        writer.member("caseSensitive", bool: component.options.caseSensitive)
        writer.member("percentEncoded", bool: component.options.percentEncoded)
        writer.member("comment", string: component.comment)
        writer.closeObject()
    }

    /// An app or path list, each string written where the list keeps it (mapped to its values first, each
    /// was copied out: a retain and a release per string).
    private static func write(_ texts: [Located<String>], to writer: inout CompactJSONWriter) {
        writer.openArray()
        for text in texts { writer.string(text.value) }
        writer.closeArray()
    }

    static func write(_ options: MatchOptions, to writer: inout CompactJSONWriter) {
        writer.openObject()
        writer.member("caseSensitive", bool: options.caseSensitive)
        writer.member("percentEncoded", bool: options.percentEncoded)
        writer.closeObject()
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
