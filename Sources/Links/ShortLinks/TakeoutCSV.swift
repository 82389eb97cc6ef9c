import Support

/// Google Takeout's export of Firebase Dynamic Links: one CSV per domain, 29 columns (short link, deep
/// link, FDL's parameters, archived, link name, creation time). Read into FDL's long-link parameters per
/// short link, so an import checks each exactly as a long link (``FirebaseLongLink/rule(_:links:ownHosts:)``).
/// Columns are found by the code in parentheses ("Android fallback link (afl)"), by name, or — in a file
/// without a header — by position, as Google's guide lists them.
public enum TakeoutCSV {
    /// The 29 columns in Google's order: the key each one is read into.
    public static let columns = [
        "shortLink", "link", "apn", "afl", "amv", "ibi", "ifl", "ius", "ipfl", "ipbi", "isi", "imv", "efr", "ofl", "st", "sd", "si",
        "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "at", "ct", "mt", "pt", "archived", "name", "created",
    ]

    /// Header texts besides the codes themselves.
    static let names: [String: String] = [
        "short link": "shortLink", "short dynamic link": "shortLink", "dynamic link": "shortLink", "deep link": "link",
        "long link": "link", "archived": "archived", "link name": "name", "name": "name", "creation time": "created",
        "creation timestamp": "created", "created": "created",
    ]

    public struct Row: Sendable, Equatable {
        /// The CSV line the record starts on (a quoted field may span lines).
        public var line: Int
        public var shortLink: String
        /// FDL's parameters, only those with a value.
        public var parameters: [String: String]
        public var archived: Bool
        public var name: String?
        public var created: String?
    }

    public struct Problem: Error, Sendable, Equatable {
        /// 0 for the file as a whole.
        public var line: Int
        public var reason: String
    }

    public struct Result: Sendable, Equatable {
        public var rows: [Row] = []
        /// Records that could not be read (their line and why); the others are still read.
        public var skipped: [Problem] = []
    }

    public static func read(_ bytes: [UInt8]) -> Swift.Result<Result, Problem> {
        let records: [(line: Int, fields: [String])]
        switch split(bytes) {
        case .failure(let problem): return .failure(problem)
        case .success(let found): records = found
        }
        guard let first = records.first else { return .failure(Problem(line: 0, reason: "the file has no records")) }
        let headerKeys = first.fields.map(columnKey)
        let recognized = headerKeys.compactMap { $0 }
        let keys: [String?]
        let data: ArraySlice<(line: Int, fields: [String])>
        if recognized.count >= 2 {
            for required in ["shortLink", "link"] where !recognized.contains(required) {
                let description = required == "shortLink" ? "the short link" : "the deep link (link)"
                return .failure(Problem(line: first.line, reason: "the header has no column for \(description)"))
            }
            keys = headerKeys
            data = records.dropFirst()
        } else if first.fields.count == columns.count {
            keys = columns
            data = records[...]
        } else {
            return .failure(
                Problem(
                    line: first.line,
                    reason:
                        "the first line is neither a header naming the columns nor a record of \(columns.count) fields (it has \(first.fields.count))"
                )
            )
        }
        var result = Result()
        for record in data {
            if record.fields.count == 1 && record.fields[0].isEmpty { continue }
            guard record.fields.count == keys.count else {
                result.skipped.append(Problem(line: record.line, reason: "has \(record.fields.count) fields; the header has \(keys.count)"))
                continue
            }
            var values: [String: String] = [:]
            for (key, field) in zip(keys, record.fields) {
                guard let key else { continue }
                let trimmed = field.trimmingSpacesAndTabs()
                if !trimmed.isEmpty { values[key] = trimmed }
            }
            guard let shortLink = values.removeValue(forKey: "shortLink") else {
                result.skipped.append(Problem(line: record.line, reason: "has no short link"))
                continue
            }
            let archived = values.removeValue(forKey: "archived").map { ["true", "yes", "1"].contains($0.lowercased()) } ?? false
            let name = values.removeValue(forKey: "name")
            let created = values.removeValue(forKey: "created")
            result.rows.append(
                Row(line: record.line, shortLink: shortLink, parameters: values, archived: archived, name: name, created: created)
            )
        }
        return .success(result)
    }

    /// The key a header cell names: a code in parentheses, a code, or a known name; nil for any other column.
    static func columnKey(_ header: String) -> String? {
        let text = header.trimmingSpacesAndTabs().lowercased()
        if let open = text.lastIndex(of: "("), let close = text.lastIndex(of: ")"), open < close {
            let code = String(text[text.index(after: open)..<close])
            if let key = columns.first(where: { $0.lowercased() == code }) { return key }
        }
        if let key = columns.first(where: { $0.lowercased() == text }) { return key }
        return names[text]
    }

    /// RFC 4180 records: a UTF-8 BOM skipped, CRLF or LF, quoted fields with `""` and line breaks inside.
    static func split(_ bytes: [UInt8]) -> Swift.Result<[(line: Int, fields: [String])], Problem> {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            return .failure(Problem(line: 0, reason: "the file is not UTF-8 text"))
        }
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var recordLine = 1
        var quoted = false
        var quoteLine = 0
        var fieldStarted = false
        let quote = UInt8(ascii: "\"")
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field = []
            fieldStarted = false
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == quote {
                    if index < bytes.count && bytes[index] == quote {
                        field.append(quote)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case quote where !fieldStarted && field.isEmpty:
                quoted = true
                quoteLine = line
                fieldStarted = true
            case UInt8(ascii: ","):
                endField()
            case UInt8(ascii: "\r") where index < bytes.count && bytes[index] == UInt8(ascii: "\n"):
                continue
            case UInt8(ascii: "\n"):
                endField()
                records.append((recordLine, fields))
                fields = []
                line += 1
                recordLine = line
            default:
                field.append(byte)
                fieldStarted = true
            }
        }
        if quoted { return .failure(Problem(line: quoteLine, reason: "a quoted field opened here is never closed")) }
        if fieldStarted || !field.isEmpty || !fields.isEmpty {
            endField()
            records.append((recordLine, fields))
        }
        return .success(records)
    }
}
