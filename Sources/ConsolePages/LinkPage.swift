import Support

/// The console's page of one stored short link: what it is (state, parameters, history) and its clicks
/// per day by visitor class, drawn as stacked bars in SVG and given in a table with the exact numbers
/// (HEAD requests counted apart, as `links stats` does). A pure function of what the store holds.
public enum LinkPage {
    /// The visitor classes in the order the chart stacks them, with their colours.
    public static let classes: [(name: String, label: String, colour: String)] = [
        ("iphone", "iPhone", "#0a58ca"), ("ipad", "iPad", "#6f42c1"), ("android", "Android", "#1a7f37"),
        ("desktop", "desktop", "#b35900"), ("in-app", "in-app browser", "#cf222e"), ("crawler", "crawler", "#6e7781"),
    ]

    public struct Content: Sendable {
        public var shortLink: String
        public var state: String
        /// The domain's kill switch is off: the link answers 410 whatever its own state.
        public var domainDisabled: Bool
        public var parameters: [(name: String, value: String)]
        /// (Unix time, what changed), oldest first.
        public var history: [(at: Int64, change: String)]
        /// The days drawn, oldest first (YYYY-MM-DD, UTC).
        public var days: [String]
        public var clicks: [(day: String, visitor: String, outcome: String, head: Bool, count: Int)]

        public init(
            shortLink: String,
            state: String,
            domainDisabled: Bool,
            parameters: [(name: String, value: String)],
            history: [(at: Int64, change: String)],
            days: [String],
            clicks: [(day: String, visitor: String, outcome: String, head: Bool, count: Int)]
        ) {
            self.shortLink = shortLink
            self.state = state
            self.domainDisabled = domainDisabled
            self.parameters = parameters
            self.history = history
            self.days = days
            self.clicks = clicks
        }
    }

    /// Clicks (not HEAD) per day and class, and HEAD requests per day.
    static func tally(_ content: Content) -> (byDay: [String: [String: Int]], head: [String: Int]) {
        var byDay: [String: [String: Int]] = [:]
        var head: [String: Int] = [:]
        for click in content.clicks {
            if click.head {
                head[click.day, default: 0] += click.count
            } else {
                byDay[click.day, default: [:]][click.visitor, default: 0] += click.count
            }
        }
        return (byDay, head)
    }

    public static func html(_ content: Content) -> String {
        let (byDay, head) = tally(content)
        let total = content.days.reduce(0) { sum, day in sum + (byDay[day]?.values.reduce(0, +) ?? 0) }
        var body = "<h1>\(HTML.escape(content.shortLink))</h1>\n<ul class=\"summary\">\n"
        let stateClass = content.state == "active" && !content.domainDisabled ? "ok" : "stale"
        body += "<li>state: <span class=\"\(stateClass)\">\(HTML.escape(content.state))</span>"
        if content.domainDisabled { body += " — its domain is switched off: every stored link on it answers 410 Gone" }
        body += "</li>\n<li>\(total) click\(total == 1 ? "" : "s") in the last \(content.days.count) days (UTC), HEAD apart</li>\n</ul>\n"
        body += "<h2>Clicks per day</h2>\n<div class=\"timeline\">\n\(chart(days: content.days, byDay: byDay))</div>\n"
        body += "<ul class=\"legend\">" + legendItems() + "</ul>\n"
        body += table(days: content.days, byDay: byDay, head: head)
        body += "<h2>Parameters</h2>\n<div class=\"table\"><table>\n<tr><th>name</th><th>value</th></tr>\n"
        for parameter in content.parameters {
            body += "<tr><td>\(HTML.escape(parameter.name))</td><td>\(HTML.escape(parameter.value))</td></tr>\n"
        }
        body += "</table></div>\n<h2>History</h2>\n<ol class=\"history\">\n"
        for entry in content.history {
            body += "<li>\(CivilTime(unixSeconds: Int(entry.at)).isoSecond)Z \(HTML.escape(entry.change))</li>\n"
        }
        body += "</ol>\n<p><a href=\"\(LinkFormPage.path)\">New short link</a></p>\n"
        return ConsolePage.frame(title: content.shortLink, body: body)
    }

    static func legendItems() -> String {
        classes.map {
            "<li><svg width=\"12\" height=\"12\" aria-hidden=\"true\"><rect width=\"12\" height=\"12\" fill=\"\($0.colour)\"/></svg> \($0.label)</li>"
        }
        .joined()
    }

    /// Stacked bars, one per day, the classes in ``classes`` order from the bottom; each bar's title says
    /// its numbers (a browser shows it on hover, a screen reader reads it).
    static func chart(days: [String], byDay: [String: [String: Int]]) -> String {
        let (width, height, left, bottom, top) = (720, 220, 40, 30, 10)
        let plotHeight = height - bottom - top
        let highest = max(1, days.map { day in byDay[day]?.values.reduce(0, +) ?? 0 }.max() ?? 1)
        let scale = niceCeiling(highest)
        let slot = Double(width - left - 10) / Double(max(1, days.count))
        var svg =
            "<svg class=\"timeline\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"clicks per day by visitor class\">\n"
        svg += "<line x1=\"\(left)\" y1=\"\(top + plotHeight)\" x2=\"\(width - 10)\" y2=\"\(top + plotHeight)\" stroke=\"#888\"/>\n"
        svg += "<text x=\"\(left - 4)\" y=\"\(top + 8)\" font-size=\"10\" text-anchor=\"end\" fill=\"currentColor\">\(scale)</text>\n"
        svg += "<text x=\"\(left - 4)\" y=\"\(top + plotHeight)\" font-size=\"10\" text-anchor=\"end\" fill=\"currentColor\">0</text>\n"
        for (index, day) in days.enumerated() {
            let x = Double(left) + slot * Double(index) + slot * 0.15
            let barWidth = slot * 0.7
            let counts = byDay[day] ?? [:]
            var base = Double(top + plotHeight)
            var parts: [String] = []
            svg += "<g><title>\(day): \(counts.values.reduce(0, +)) clicks"
            for visitor in classes where (counts[visitor.name] ?? 0) > 0 { parts.append("\(visitor.label) \(counts[visitor.name]!)") }
            svg += parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
            svg += "</title>"
            for visitor in classes {
                let count = counts[visitor.name] ?? 0
                guard count > 0 else { continue }
                let barHeight = Double(plotHeight) * Double(count) / Double(scale)
                base -= barHeight
                svg +=
                    "<rect class=\"\(visitor.name)\" x=\"\(format(x))\" y=\"\(format(base))\" width=\"\(format(barWidth))\" height=\"\(format(barHeight))\" fill=\"\(visitor.colour)\"/>"
            }
            svg += "</g>\n"
            if index % max(1, days.count / 6) == 0 || index == days.count - 1 {
                svg +=
                    "<text x=\"\(format(x + barWidth / 2))\" y=\"\(height - 10)\" font-size=\"10\" text-anchor=\"middle\" fill=\"currentColor\">\(day.dropFirst(5))</text>\n"
            }
        }
        return svg + "</svg>\n"
    }

    /// The axis' top: 1, 2 or 5 times a power of ten, at or above `value`.
    static func niceCeiling(_ value: Int) -> Int {
        var power = 1
        while true {
            for step in [1, 2, 5] where step * power >= value { return step * power }
            power *= 10
        }
    }

    static func format(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(abs(tenths % 10))"
    }

    static func table(days: [String], byDay: [String: [String: Int]], head: [String: Int]) -> String {
        var html = "<div class=\"table\"><table class=\"clicks\">\n<tr><th>day</th>"
        for visitor in classes { html += "<th>\(visitor.label)</th>" }
        html += "<th>HEAD</th></tr>\n"
        var totals = [String: Int]()
        var headTotal = 0
        for day in days.reversed() {
            let counts = byDay[day] ?? [:]
            guard !counts.isEmpty || head[day] != nil else { continue }
            html += "<tr><td>\(day)</td>"
            for visitor in classes {
                html += "<td>\(counts[visitor.name] ?? 0)</td>"
                totals[visitor.name, default: 0] += counts[visitor.name] ?? 0
            }
            html += "<td>\(head[day] ?? 0)</td></tr>\n"
            headTotal += head[day] ?? 0
        }
        html += "<tr class=\"total\"><td>total</td>"
        for visitor in classes { html += "<td>\(totals[visitor.name] ?? 0)</td>" }
        return html + "<td>\(headTotal)</td></tr>\n</table></div>\n"
    }
}
