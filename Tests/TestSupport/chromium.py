"""Debian's chromium through chromium-driver, headless, for the tests' browser scripts (selenium from
.ci/venv): one way to start it, with the browser's console log kept for the scripts to read."""
import atexit
import os
import shutil
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service


def chromium(width=1200, height=900, flags=(), mobile=None):
    """`flags`: more of chromium's command line; `mobile`: chromedriver's mobileEmulation (a phone's metrics and
    user agent), in place of the window size."""
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    size = () if mobile else (f"--window-size={width},{height}",)
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", *size, *flags):
        options.add_argument(flag)
    if mobile:
        options.add_experimental_option("mobileEmulation", mobile)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # chromium leaves its singleton socket's directory in TMPDIR after it quits: one of the script's own,
    # removed when the script exits.
    scratch = tempfile.mkdtemp(prefix="aasa-chromium-")
    atexit.register(shutil.rmtree, scratch, True)
    service = Service("/usr/bin/chromedriver", env=dict(os.environ, TMPDIR=scratch))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    return driver


def submit_and_wait(driver, field, seconds=30):
    """Submits the field's form and waits, bounded, for the next document to finish loading. Reading
    elements straight after submit() can find the old page's. A marker on the old page's window tells the
    pages apart (a new document gets a new window object); selenium's staleness_of is not used because
    chromium sometimes answers a node of a document being replaced with an inspector error ("Node with
    given id does not belong to the document") instead of a stale-element one, and the wait raises it.
    Any such error while the page changes is retried until the deadline."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.leavingForSubmit = true")
    field.submit()
    WebDriverWait(driver, seconds, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return window.leavingForSubmit !== true && document.readyState === 'complete'")
    )


def drive(check, **size):
    """Runs check(driver), which returns what failed, in a fresh chromium; prints each failure and exits 0
    when there was none. The browser is closed whatever happens."""
    import sys

    driver = chromium(**size)
    try:
        failures = check(driver)
    finally:
        driver.quit()
    for failure in failures:
        print(failure)
    sys.exit(1 if failures else 0)
