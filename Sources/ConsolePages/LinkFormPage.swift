/// The console's form for a new short link: the link domain, the deep link, an alias or the shortest free
/// suffix, and where people without the app go. The server checks what it gets as it checks the API's
/// body; a refusal comes back as this page with its words above the form, the field it names marked, and
/// every value kept. No script: a plain form posted to the same origin (the only origin the admin
/// listener takes a form from).
public enum LinkFormPage {
    public static let path = "/console/links/new"

    public struct Content: Sendable {
        /// The hosts links may be created on (the config's sites with `links`).
        public var domains: [String]
        /// What was typed, by field (``ConsoleLinkForm`` names), to fill the form again.
        public var values: [String: String]
        /// Why the last submission was refused.
        public var refusal: String?
        /// The field the refusal is about.
        public var field: String?
        /// A token is configured (the form asks for it); without one no link can be created here.
        public var tokenConfigured = true

        public init(domains: [String], values: [String: String] = [:], refusal: String? = nil, field: String? = nil) {
            self.domains = domains
            self.values = values
            self.refusal = refusal
            self.field = field
        }
    }

    /// (field, label, input type, hint) for the text fields after the domain.
    static let inputs: [(name: String, label: String, type: String, hint: String)] = [
        ("link", "Deep link", "url", "the URL the app receives (FDL's link); required"),
        ("alias", "Alias", "text", "the path: letters, digits, - and _; empty for an unguessable one"),
        ("ofl", "Web", "url", "where desktops go; default: the deep link"),
        ("ifl", "iPhone fallback", "url", "instead of the App Store"),
        ("ipfl", "iPad fallback", "url", "instead of the App Store"),
        ("afl", "Android fallback", "url", "instead of Google Play"),
        ("st", "Preview title", "text", "shown in link previews"),
        ("sd", "Preview description", "text", "shown in link previews"),
        ("si", "Preview image", "url", "an https URL"),
    ]

    public static func html(_ content: Content) -> String {
        var body = "<h1>New short link</h1>\n"
        guard !content.domains.isEmpty else {
            body += "<p>No site of the config has \"links\": short links are created on a link domain (docs/links.md).</p>\n"
            return ConsolePage.frame(title: "New short link", body: body)
        }
        if let refusal = content.refusal {
            body += "<p class=\"error\" role=\"alert\">Not created: \(HTML.escape(refusal))</p>\n"
        }
        func invalid(_ name: String) -> String { content.field == name ? " aria-invalid=\"true\" class=\"invalid\"" : "" }
        body += "<form class=\"link\" method=\"post\" action=\"\(path)\">\n"
        body += "<label>Link domain <select name=\"domain\"\(invalid("domain"))>\n"
        for domain in content.domains {
            let selected = content.values["domain"] == domain ? " selected" : ""
            body += "<option\(selected)>\(HTML.escape(domain))</option>\n"
        }
        body += "</select></label>\n"
        for input in inputs {
            let value = content.values[input.name].map { " value=\"\(HTML.escape($0))\"" } ?? ""
            let required = input.name == "link" ? " required" : ""
            body += "<label>\(input.label) <input name=\"\(input.name)\" type=\"\(input.type)\"\(value)\(required)\(invalid(input.name))>"
            body += " <small>\(HTML.escape(input.hint))</small></label>\n"
        }
        if content.tokenConfigured {
            body += "<label>Token <input name=\"token\" type=\"password\" autocomplete=\"current-password\" required\(invalid("token"))>"
            body +=
                " <small>the link API's token (server.linkAPI.tokenFile) or the admin token: creating links needs one, here as in the API</small></label>\n"
        } else {
            body +=
                "<p class=\"warning\">Creating links needs a token, here as in the API: set server.linkAPI.tokenFile (or adminTokenFile) "
            body += "in the config.</p>\n"
        }
        let checked = content.values["short"] != nil ? " checked" : ""
        body += "<label class=\"check\"><input name=\"short\" type=\"checkbox\"\(checked)\(invalid("short"))> "
        body += "the shortest free suffix (4 characters or more) instead of an unguessable one</label>\n"
        body += "<button type=\"submit\">Create the link</button>\n</form>\n"
        body += "<p>Every destination must be on the site's links.allow; the link answers on every replica within a second.</p>\n"
        return ConsolePage.frame(title: "New short link", body: body)
    }
}
