"""A stored short link's landing page in Debian's chromium (selenium, chromium-driver) as an iPhone: the App
Store button's script runs under the page's Content-Security-Policy (by its hash), asks the server for a
claim URL and hands it to the clipboard inside the tap, then opens the store. The clipboard's write is
observed (the page's own origin is treated as secure, as https would be); every other host fails to resolve,
so nothing leaves the machine. Prints the copied claim URL; exit status 0 when every check held."""
import os
import re
import sys
import time

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "TestSupport"))
from chromium import chromium  # noqa: E402

port, path = sys.argv[1], sys.argv[2]
base = f"http://go.example.com:{port}"
iphone = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.5 Mobile/15E148 Safari/604.1")
failures = []

driver = chromium(flags=("--host-resolver-rules=MAP go.example.com 127.0.0.1, MAP * ~NOTFOUND",
                         f"--unsafely-treat-insecure-origin-as-secure={base}", f"--user-agent={iphone}"))
# What the page writes to the clipboard, kept where the test can read it after the store navigation.
driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
  if (navigator.clipboard) {
    navigator.clipboard.write = async function (items) {
      const blob = await items[0].getType("text/plain");
      localStorage.setItem("copied", await blob.text());
    };
  }
"""})
copied = ""
try:
    driver.get(base + path)
    button = driver.find_element(By.CSS_SELECTOR, "a[data-claim]")
    if not button.get_attribute("href").startswith("https://apps.apple.com/app/id"):
        failures.append(f"the claim button is not the App Store's: {button.get_attribute('href')}")
    note = driver.find_element(By.CSS_SELECTOR, "p.note").text
    if "copies a one-time link to your clipboard" not in note:
        failures.append(f"the page does not say what it copies: {note!r}")
    for entry in driver.get_log("browser"):
        if entry["level"] in ("SEVERE", "WARNING"):
            failures.append(f"before the tap: {entry['message']}")
    button.click()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and driver.current_url.startswith(base):
        time.sleep(0.1)
    if driver.current_url.startswith(base):
        failures.append("the store did not open after the tap")
    for entry in driver.get_log("browser"):
        # The store cannot be reached from here, on purpose; anything else (a CSP refusal) is a failure.
        if entry["level"] == "SEVERE" and "apps.apple.com" not in entry["message"]:
            failures.append(f"after the tap: {entry['message']}")
    driver.get(base + "/_/link.css")
    copied = driver.execute_script("return localStorage.getItem('copied')") or ""
    if not re.fullmatch(r"https://go\.example\.com/_/c/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{32}", copied):
        failures.append(f"copied {copied!r}")
finally:
    driver.quit()

print(copied)
for failure in failures:
    print(failure, file=sys.stderr)
sys.exit(1 if failures else 0)
