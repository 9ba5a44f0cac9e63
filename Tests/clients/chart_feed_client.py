"""Apple's legacy top-chart feed through itunes-app-scraper-dmi (PyPI), pointed at `epf serve`.

Usage: python chart_feed_client.py BASE_URL
The scraper asks Apple for
  http://ax.itunes.apple.com/WebObjects/MZStoreServices.woa/ws/RSS/{collection}/{genre}/limit={n}/json?s={storefront}
(an empty genre leaves `//`) and reads `feed.entry[].id.attributes["im:id"]` from the answer. Here only the host
changes: the same path and query go to BASE_URL, as they would to a proxy standing in for Apple, and the scraper
parses epf's answer as it parses Apple's. Prints one line per check, `name: ids`, for
Tests/EPFServerTests/ChartRoutesTests.swift to compare.
"""
import sys

import requests
from itunes_app_scraper.scraper import AppStoreScraper
from itunes_app_scraper.util import AppStoreCollections

base = sys.argv[1].rstrip("/")
apple = "http://ax.itunes.apple.com"
send = requests.get


def to_epf(url, *arguments, **options):
    if not url.startswith(apple + "/"):
        raise AssertionError(f"the scraper asked for an unexpected URL: {url}")
    return send(base + url[len(apple):], *arguments, **options)


requests.get = to_epf
scraper = AppStoreScraper()
print("free us: " + " ".join(scraper.get_app_ids_for_collection(AppStoreCollections.TOP_FREE_IOS, "", 5, "us")))
print("paid ipad games us: " + " ".join(
    scraper.get_app_ids_for_collection(AppStoreCollections.TOP_PAID_IPAD, 6014, 3, "us")))
