"""A human-only input on the confirmation page (/confirm/{id}, issue #40.4, CHEQ's Flow B) in a
real headless Chromium, driven by Selenium.

Usage: confirm_human_browser.py CONFIRM_URL CREDENTIAL FIELD WRONG RIGHT
  Signs in with CREDENTIAL (an API key of the caller), checks that the page has a masked field
  for the human-only input FIELD and does not quote it among the call's arguments, types WRONG
  and approves (the page must refuse it beside the field and not show it back), then types
  RIGHT and approves (the page must say approved, and not show RIGHT either).
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import sys

from checks import check, finish
from selenium.webdriver.common.by import By
from ui_browser import browser, wait


def main(url, credential, field, wrong, right):
    driver = browser()
    try:
        driver.get(url)
        driver.find_element(By.ID, "credential").send_keys(credential)
        driver.find_element(By.ID, "sign-in").click()
        wait(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Confirm this action")
        box = driver.find_element(By.ID, f"human-{field}")
        kind = box.get_attribute("type")
        check("the page has a masked field for the human-only input", kind == "password", kind)
        quoted = [e.get_attribute("data-name") for e in driver.find_elements(By.CSS_SELECTOR, "pre.value")]
        check("the call's arguments do not include it", field not in quoted and "to" in quoted, str(quoted))
        box.send_keys(wrong)
        driver.find_element(By.ID, "approve").click()
        problem = wait(driver, lambda d: d.find_element(By.ID, f"problem-{field}").text)
        check("a wrongly typed value is refused beside its field", field in problem, problem)
        check("the refused value is not shown back", wrong not in driver.page_source, "")
        wait(driver, lambda d: d.find_element(By.ID, f"human-{field}")).send_keys(right)
        driver.find_element(By.ID, "approve").click()
        outcome = wait(driver, lambda d: d.find_element(By.ID, "outcome").text)
        check("typed right, the approval is taken", outcome.startswith("Approved"), outcome)
        check("the typed value is not shown back", right not in driver.page_source, "")
    finally:
        driver.quit()


if __name__ == "__main__":
    main(*sys.argv[1:6])
    finish()
