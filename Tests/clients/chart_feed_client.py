"""Apple's legacy top-chart feed through itunes-app-scraper-dmi (PyPI), pointed at `epf serve`.

Usage: python chart_feed_client.py BASE_URL
The scraper asks Apple for
  http://ax.itunes.apple.com/WebObjects/MZStoreServices.woa/ws/RSS/{collection}/{genre}/limit={n}/json?s={storefront}
and reads `feed.entry[].id.attributes["im:id"]` from the answer. Here that request goes to the same feed on the
path epf serves it (Apple's itunes.apple.com form), `/{cc}/rss/{collection}/limit={n}[/genre={genre}]/json`, and the
scraper parses epf's answer as it parses Apple's. Prints one line per check, `name: ids`, for
Tests/EPFServerTests/ChartRoutesTests.swift to compare.
"""
import re
import sys

import requests
from itunes_app_scraper.scraper import AppStoreScraper
from itunes_app_scraper.util import AppStoreCollections, AppStoreMarkets

base = sys.argv[1]
countries = {value: name.lower() for name, value in vars(AppStoreMarkets).items() if not name.startswith("_")}
apple = re.compile(r"https?://ax\.itunes\.apple\.com/WebObjects/MZStoreServices\.woa/ws/RSS/"
                   r"(\w+)/(\d*)/limit=(\d+)/json\?s=(\d+)$")
send = requests.get


def to_epf(url, *arguments, **options):
    match = apple.match(url)
    if not match:
        raise AssertionError(f"the scraper asked for an unexpected URL: {url}")
    collection, genre, limit, storefront = match.groups()
    path = f"/{countries[int(storefront)]}/rss/{collection}/limit={limit}" + (f"/genre={genre}" if genre else "")
    return send(base + path + "/json", *arguments, **options)


requests.get = to_epf
scraper = AppStoreScraper()
print("free us: " + " ".join(scraper.get_app_ids_for_collection(AppStoreCollections.TOP_FREE_IOS, "", 5, "us")))
print("paid ipad games us: " + " ".join(
    scraper.get_app_ids_for_collection(AppStoreCollections.TOP_PAID_IPAD, 6014, 3, "us")))
