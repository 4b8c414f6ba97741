"""The confirmation page (/confirm/{id}, issue #40) in a real headless Chromium, driven by Selenium.

Usage: confirm_browser.py CONFIRM_URL CREDENTIAL EXPECTED_JSON
  Opens CONFIRM_URL, signs in with CREDENTIAL (an API key of the caller), checks that the page
  quotes exactly the parameters of EXPECTED_JSON (name -> value as the page shows it) and no
  other, then approves, and checks the page says so.
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import json
import sys

from checks import check, finish
from selenium.webdriver.common.by import By
from ui_browser import browser, wait


def main(url, credential, expected):
    driver = browser()
    try:
        driver.get(url)
        title = driver.find_element(By.TAG_NAME, "h1").text
        check("a signed-out visitor is asked to sign in, not shown the call", title == "Sign in to confirm", title)
        check("nothing of the call is on the sign-in page", "nina" not in driver.page_source, "")
        field = driver.find_element(By.ID, "credential")
        field.send_keys(credential)
        driver.find_element(By.ID, "sign-in").click()
        wait(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Confirm this action")
        shown = {
            e.get_attribute("data-name"): e.text for e in driver.find_elements(By.CSS_SELECTOR, "pre.value")
        }
        check("the page quotes exactly the effective arguments", shown == expected, f"{shown} != {expected}")
        tool = driver.find_element(By.ID, "tool").text
        check("the page names the tool", tool == "send_payment", tool)
        driver.find_element(By.ID, "approve").click()
        outcome = wait(driver, lambda d: d.find_element(By.ID, "outcome").text)
        check("approving says the retry will run it once", outcome.startswith("Approved"), outcome)
        driver.get(url)
        status = wait(driver, lambda d: d.find_element(By.ID, "status").text)
        check("the page now shows it approved, with no form", "approved" in status, status)
    finally:
        driver.quit()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
    finish()
