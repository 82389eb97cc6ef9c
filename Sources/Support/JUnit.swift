/// JUnit XML as CI systems read it (testsuites → a suite per subject → a test case each, failed or with
/// its output), written in one place for `check --junit` and `match --cases --junit`.
public enum JUnit {
    public struct Failure: Sendable {
        public var message: String
        public var type: String
        public var detail: String

        public init(message: String, type: String, detail: String) {
            self.message = message
            self.type = type
            self.detail = detail
        }
    }

    public struct Case: Sendable {
        public var classname: String
        public var name: String
        /// Nil: the case passed, and `output` says what was seen.
        public var failure: Failure?
        public var output: String

        public init(classname: String, name: String, failure: Failure?, output: String) {
            self.classname = classname
            self.name = name
            self.failure = failure
            self.output = output
        }
    }

    public struct Suite: Sendable {
        public var name: String
        public var cases: [Case]

        public init(name: String, cases: [Case]) {
            self.name = name
            self.cases = cases
        }

        var failures: Int { cases.count { $0.failure != nil } }
    }

    /// Every text is escaped here, so callers pass plain text.
    public static func document(name: String, suites: [Suite]) -> String {
        let tests = suites.reduce(0) { $0 + $1.cases.count }
        let failures = suites.reduce(0) { $0 + $1.failures }
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"\(Markup.escape(name))\" tests=\"\(tests)\" failures=\"\(failures)\">\n"
        for suite in suites {
            out += "  <testsuite name=\"\(Markup.escape(suite.name))\" tests=\"\(suite.cases.count)\" failures=\"\(suite.failures)\">\n"
            for test in suite.cases {
                out += "    <testcase classname=\"\(Markup.escape(test.classname))\" name=\"\(Markup.escape(test.name))\">\n"
                if let failure = test.failure {
                    out += "      <failure message=\"\(Markup.escape(failure.message))\" type=\"\(Markup.escape(failure.type))\">"
                    out += "\(Markup.escape(failure.detail))</failure>\n"
                } else {
                    out += "      <system-out>\(Markup.escape(test.output))</system-out>\n"
                }
                out += "    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>\n"
    }
}
