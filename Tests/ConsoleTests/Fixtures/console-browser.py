"""Drives the admin console in Debian's chromium with chromium-driver (selenium): the pages load with no
console error and no CSP violation, the search finds one host among many, the host page draws its
timeline and answers the match form, and markup in a request is shown as text. Screenshots go to the
directory given. Exit status 0 when every check held; each failure is printed."""
import os
import sys

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "TestSupport"))
from chromium import chromium, submit_and_wait  # noqa: E402

base, wanted, screenshots = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


driver = chromium()


def console_errors(page):
    entries = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
    for entry in entries:
        failures.append(f"{page}: browser console: {entry['message']}")


try:
    driver.get(base + "/console")
    check(driver.title.startswith("Hosts"), f"index title: {driver.title!r}")
    check(len(driver.find_elements(By.CSS_SELECTOR, "table tbody tr")) == 50, "the first page lists 50 hosts")
    summary = driver.find_element(By.CSS_SELECTOR, "ul.summary").text
    check("100000 hosts served" in summary and "Apple's CDN has the current version for" in summary, f"summary: {summary!r}")
    stylesheet_applied = driver.execute_script("return getComputedStyle(document.querySelector('header')).borderBottomStyle")
    check(stylesheet_applied == "solid", f"the stylesheet applies (CSP allows 'self'): {stylesheet_applied!r}")
    console_errors("index")
    driver.save_screenshot(screenshots + "/console-index.png")

    box = driver.find_element(By.NAME, "q")
    box.send_keys(wanted)
    submit_and_wait(driver, box)
    rows = driver.find_elements(By.CSS_SELECTOR, "table tbody tr td.host a")
    check([row.text for row in rows] == [wanted, "www." + wanted], f"search for {wanted}: {[row.text for row in rows]}")
    console_errors("search")

    rows[0].click()
    check(driver.find_element(By.TAG_NAME, "h1").text == wanted, "the host page is the host's")
    circles = driver.find_elements(By.CSS_SELECTOR, "svg.timeline circle")
    check(len(circles) >= 1, "the timeline shows the recorded fetch")
    url = driver.find_element(By.NAME, "url")
    url.clear()
    url.send_keys(f"https://{wanted}/p/{wanted[4:].split('.')[0]}/shoes")
    submit_and_wait(driver, url)
    answer = driver.find_element(By.CSS_SELECTOR, "p.match").text
    check(" opens ABCDE12345.com.example.shop: decided by " in answer, f"match answer: {answer!r}")
    legend = driver.find_element(By.CSS_SELECTOR, "ul.legend").text
    check("the version served now" in legend and "an earlier version" in legend, f"legend: {legend!r}")
    check(len(driver.find_elements(By.CSS_SELECTOR, "ol.versions li")) >= 1, "the versions are listed in words")
    # A bare path is this host's; another host's URL is not answered from this host's file.
    url = driver.find_element(By.NAME, "url")
    url.clear()
    url.send_keys(f"/p/{wanted[4:].split('.')[0]}/shoes")
    submit_and_wait(driver, url)
    answer = driver.find_element(By.CSS_SELECTOR, "p.match").text
    check(answer.startswith(f"https://{wanted}/p/") and " opens ABCDE12345.com.example.shop" in answer, f"bare path: {answer!r}")
    check("(line 1)" not in answer, f"lines of the compact file: {answer!r}")
    url = driver.find_element(By.NAME, "url")
    url.clear()
    url.send_keys("https://shop7.example.com/p/31337/shoes")
    submit_and_wait(driver, url)
    answer = driver.find_element(By.CSS_SELECTOR, "p.match").text
    check("which has its own file" in answer and "opens" not in answer.split("(")[0], f"another host's URL: {answer!r}")
    console_errors("host")
    driver.save_screenshot(screenshots + "/console-host.png")

    # A phone's screen: the table still fits.
    driver.set_window_size(390, 844)
    driver.get(base + "/console")
    overflow = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    check(overflow <= 0, f"no sideways scrolling on a phone-sized screen ({overflow} px)")
    for heading in ("Findings", "Certificate", "Apple"):
        shown = [cell.is_displayed() for cell in driver.find_elements(By.TAG_NAME, "th") if cell.text.lower() == heading.lower()]
        check(shown == [True], f"the {heading} column on a phone: {shown}")
    breaking = driver.execute_script("var s = getComputedStyle(document.querySelector('td.host')); return [s.wordBreak, s.overflowWrap]")
    check(breaking == ["normal", "normal"], f"host names break after a dot, never inside a label: {breaking!r}")
    check(len(driver.find_elements(By.CSS_SELECTOR, "td.host a wbr")) >= 100, "break points after the dots")
    driver.save_screenshot(screenshots + "/console-phone.png")
    driver.get(base + "/console/host/" + wanted)
    label = driver.execute_script("return document.querySelector('svg.timeline text').getBoundingClientRect().height")
    check(label >= 10, f"timeline labels readable on a phone: {label:.1f} px")
    overflow = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    check(overflow <= 0, f"the host page does not scroll sideways ({overflow} px); the timeline scrolls in its box")
    driver.save_screenshot(screenshots + "/console-phone-host.png")

    # Markup in a request is text: no element is made of it, nothing runs.
    markup = "<script>document.title='owned'</script><img src=x onerror=\"document.title='owned'\">"
    driver.get(base + "/console?q=" + __import__("urllib.parse").parse.quote(markup))
    check(driver.title != "owned", "markup in the query ran")
    check(len(driver.find_elements(By.TAG_NAME, "script")) == 0, "a script element was made from the query")
    check(len(driver.find_elements(By.CSS_SELECTOR, "main img")) == 0, "an img element was made from the query")
    check(markup in driver.find_element(By.TAG_NAME, "main").text, "the query is shown as text")
    console_errors("markup")
finally:
    driver.quit()

for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
