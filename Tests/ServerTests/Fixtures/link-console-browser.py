"""A stored link's console page in Debian's chromium (selenium): it loads with no console error and no
CSP violation, the stylesheet applies, the chart's bars are drawn with the heights the numbers give, and
the table's totals are the counts. Usage: link-console-browser.py PAGE_URL SCREENSHOT EXPECTED_TOTALS
(EXPECTED_TOTALS: the total row's cells, space-separated). Exit status 0 when every check held."""
import os
import sys

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "TestSupport"))
from chromium import drive  # noqa: E402

url, screenshot, expected = sys.argv[1], sys.argv[2], sys.argv[3]


def check(driver):
    failures = []
    driver.get(url)
    for entry in driver.get_log("browser"):
        if entry["level"] in ("SEVERE", "WARNING"):
            failures.append(f"browser console: {entry['message']}")
    border = driver.execute_script("return getComputedStyle(document.querySelector('header')).borderBottomStyle")
    if border != "solid":
        failures.append(f"the stylesheet does not apply: {border!r}")
    bars = driver.find_elements(By.CSS_SELECTOR, "svg.timeline rect")
    heights = [bar.rect["height"] for bar in bars]
    if not bars or min(heights) <= 0:
        failures.append(f"the chart's bars are not drawn: {heights}")
    totals = driver.find_element(By.CSS_SELECTOR, "table.clicks tr.total").text.split()
    if totals[1:] != expected.split():
        failures.append(f"total row {totals} is not total {expected}")
    driver.save_screenshot(screenshot)
    return failures


drive(check)
