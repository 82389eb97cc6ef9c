"""The console's form for a new short link in Debian's chromium (selenium), as a person uses it: reached
from the console's front page, it loads with no console error or CSP violation; a destination off the allowlist comes back (400, the one
message the browser logs) with the server's words, the field marked and what was typed kept (the token not); a good one lands on the new
link's page. Usage: link-form-browser.py CONSOLE_URL TOKEN SCREENSHOT. Exit status 0 when every check held."""
import os
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "TestSupport"))
from chromium import drive  # noqa: E402

url, token, screenshot = sys.argv[1], sys.argv[2], sys.argv[3]


def fill(driver, values):
    for name, value in values.items():
        field = driver.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)


def console_messages(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]


def check(driver):
    failures = []
    driver.get(url)
    driver.find_element(By.LINK_TEXT, "create one").click()
    WebDriverWait(driver, 10).until(lambda d: d.current_url.endswith("/console/links/new"))
    failures += [f"browser console on the form: {message}" for message in console_messages(driver)]
    Select(driver.find_element(By.NAME, "domain")).select_by_visible_text("go.example.com")
    fill(driver, {"link": "https://evil.example/x", "alias": "from-console", "st": "Made in the console", "token": token})
    driver.find_element(By.CSS_SELECTOR, "form.link button[type=submit]").click()
    try:
        WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.error"))
    except Exception:
        return failures + [f"no refusal shown at {driver.current_url}: {driver.page_source[:600]}"]
    error = driver.find_element(By.CSS_SELECTOR, "p.error").text
    if "evil.example" not in error or "links.allow" not in error:
        failures.append(f"the refusal does not say why: {error!r}")
    link = driver.find_element(By.NAME, "link")
    if link.get_attribute("aria-invalid") != "true" or link.get_attribute("value") != "https://evil.example/x":
        failures.append("the refused field is not marked, or what was typed is lost")
    if driver.find_element(By.NAME, "st").get_attribute("value") != "Made in the console":
        failures.append("the other fields were not kept")
    if driver.find_element(By.NAME, "token").get_attribute("value") != "":
        failures.append("the token was sent back into the page")
    driver.save_screenshot(screenshot.replace(".png", "-refused.png"))
    logged = console_messages(driver)
    if len(logged) != 1 or "status of 400" not in logged[0]:
        failures.append(f"browser console after the refusal: {logged}")

    fill(driver, {"link": "https://example.com/from-console", "token": token})
    driver.find_element(By.CSS_SELECTOR, "form.link button[type=submit]").click()
    WebDriverWait(driver, 10).until(lambda d: "/console/link/" in d.current_url)
    if not driver.current_url.endswith("/console/link/go.example.com/from-console"):
        failures.append(f"landed on {driver.current_url}")
    heading = driver.find_element(By.TAG_NAME, "h1").text
    if heading != "https://go.example.com/from-console":
        failures.append(f"the new link's page says {heading!r}")
    failures += [f"browser console on the new link's page: {message}" for message in console_messages(driver)]
    driver.save_screenshot(screenshot)
    return failures


drive(check)
