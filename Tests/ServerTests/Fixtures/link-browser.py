"""Loads a link domain's pages in Debian's chromium (selenium, chromium-driver) as an iPhone at 390 px,
light and dark, a site's own landing page template, and reads the crawler's preview with BeautifulSoup as a preview fetcher's HTML parser
would. go.example.com is mapped to 127.0.0.1 inside the browser, so nothing leaves the machine.
Exit status 0 when every check held; each failure is printed. Screenshots go to the directory given."""
import os
import sys
import urllib.request

from bs4 import BeautifulSoup
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "TestSupport"))
from chromium import chromium  # noqa: E402

port, screenshots = sys.argv[1], sys.argv[2]
base = f"http://go.example.com:{port}"
iphone = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.5 Mobile/15E148 Safari/604.1")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


# The preview, as a crawler reads it: Open Graph, X's card and App Links tags from a real HTML parser.
request = urllib.request.Request(f"http://127.0.0.1:{port}/p/42",
                                 headers={"Host": "go.example.com", "User-Agent": "Slackbot-LinkExpanding 1.0"})
with urllib.request.urlopen(request, timeout=10) as response:
    check(response.status == 200, f"crawler status {response.status}")
    soup = BeautifulSoup(response.read().decode("utf-8"), "html.parser")


def meta(key):
    tag = soup.find("meta", attrs={"property": key}) or soup.find("meta", attrs={"name": key})
    return tag.get("content") if tag else None


check(meta("og:title") == "Spring <sale> & more", f"og:title {meta('og:title')!r}")
check(meta("og:description") == "Everything half price", f"og:description {meta('og:description')!r}")
check(meta("og:url") == "https://go.example.com/p/42", f"og:url {meta('og:url')!r}")
check(meta("twitter:card") == "summary", f"twitter:card {meta('twitter:card')!r}")
check(meta("al:ios:app_store_id") == "123456789", f"al:ios:app_store_id {meta('al:ios:app_store_id')!r}")
check(meta("al:android:package") == "com.example.shop", f"al:android:package {meta('al:android:package')!r}")
check(meta("al:web:url") == "https://shop.example.com/item/42", f"al:web:url {meta('al:web:url')!r}")
check(soup.title.string == "Spring <sale> & more", f"title {soup.title.string!r}")
check(soup.find("script") is None and soup.find("sale") is None, "markup from the config became elements")

driver = chromium(flags=("--host-resolver-rules=MAP go.example.com 127.0.0.1, MAP custom.example.com 127.0.0.1",
                         f"--user-agent={iphone}"),
                  mobile={"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3.0}, "userAgent": iphone})


def console_errors(page, expected_status=None):
    for entry in driver.get_log("browser"):
        if entry["level"] not in ("SEVERE", "WARNING"):
            continue
        # The refusal page is a 400 on purpose; chromium logs the status of the document itself.
        if expected_status and f"status of {expected_status}" in entry["message"]:
            continue
        failures.append(f"{page}: browser console: {entry['message']}")


try:
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        driver.get(base + "/p/42?ref=mail")
        check(driver.find_element(By.TAG_NAME, "h1").text == "Spring <sale> & more", "the heading shows the text")
        banner = driver.find_element(By.CSS_SELECTOR, 'meta[name="apple-itunes-app"]').get_attribute("content")
        check(banner == "app-id=123456789, app-argument=https://go.example.com/p/42?ref=mail", f"banner {banner!r}")
        buttons = {a.text: a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "nav.actions a")}
        check(buttons.get("Open in Example Shop") == "https://open.example.com/p/42?ref=mail", f"buttons {buttons}")
        check(buttons.get("Get Example Shop on the App Store") == "https://apps.apple.com/app/id123456789", f"buttons {buttons}")
        check(buttons.get("Continue on the web") == "https://shop.example.com/item/42", f"buttons {buttons}")
        for label in buttons:
            element = driver.find_element(By.LINK_TEXT, label)
            check(element.is_displayed() and element.size["height"] >= 40, f"{label}: a button you can tap")
        radius = driver.execute_script("return getComputedStyle(document.querySelector('main.card')).borderTopLeftRadius")
        check(radius == "20px", f"the stylesheet from /_/link.css applies: {radius!r}")
        width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        check(width[0] <= width[1] and width[1] == 390, f"fits 390 px without scrolling sideways: {width}")
        background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        expected = "rgb(0, 0, 0)" if scheme == "dark" else "rgb(245, 245, 247)"
        check(background == expected, f"{scheme}: body background {background!r}")
        console_errors(f"landing ({scheme})")
        driver.save_screenshot(f"{screenshots}/landing-{scheme}.png")
    # A site's own template: its inline <style> runs because the policy names its hash, nothing else does.
    driver.get(f"http://custom.example.com:{port}/spring?ref=mail")
    color = driver.execute_script("return getComputedStyle(document.querySelector('h1')).color")
    check(color == "rgb(1, 2, 3)", f"the template's own style applies under its CSP hash: {color!r}")
    check(driver.find_element(By.TAG_NAME, "footer").text == "MARK", "the template's own markup")
    banner = driver.find_element(By.CSS_SELECTOR, 'meta[name="apple-itunes-app"]').get_attribute("content")
    check(banner == "app-id=123456789, app-argument=https://custom.example.com/spring?ref=mail", f"template banner {banner!r}")
    buttons = {a.text: a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "nav.actions a")}
    check(buttons.get("Open in Example Shop") == "https://open.example.com/spring?ref=mail", f"template buttons {buttons}")
    console_errors("own landing page")
    driver.save_screenshot(f"{screenshots}/own-landing.png")
    # An FDL long link's flow page and a refusal render under the same policy.
    driver.get(base + "/?link=https%3A%2F%2Fexample.com%2Fp%2F1&d=1")
    check(len(driver.find_elements(By.CSS_SELECTOR, "table tr")) == 7, "the flow lists seven visitors")
    console_errors("flow")
    driver.save_screenshot(f"{screenshots}/flow.png")
    driver.get(base + "/?link=https%3A%2F%2Fevil.example%2F")
    check("This link is not valid" in driver.find_element(By.TAG_NAME, "h1").text, "the refusal page")
    check(driver.current_url.startswith(base), f"no redirect: {driver.current_url}")
    console_errors("refusal", expected_status=400)
finally:
    driver.quit()

for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
