/// SQL for a small catalogue in the importer's contract schema, shared by the query and server tests.
public enum CatalogueFixture {
    /// The contract schema (same tables and columns as the EPF files; prices TEXT, dates ISO TEXT).
    public static let schema = """
    CREATE TABLE application (export_date INTEGER, application_id INTEGER PRIMARY KEY, title TEXT,
        recommended_age TEXT, artist_name TEXT, seller_name TEXT, company_url TEXT, support_url TEXT,
        view_url TEXT, artwork_url_large TEXT, artwork_url_small TEXT, itunes_release_date TEXT,
        copyright TEXT, description TEXT, version TEXT, itunes_version TEXT, download_size INTEGER);
    CREATE TABLE application_detail (export_date INTEGER, application_id INTEGER, language_code TEXT,
        title TEXT, description TEXT, release_notes TEXT, company_url TEXT, support_url TEXT,
        screenshot_url_1 TEXT, screenshot_url_2 TEXT, screenshot_url_3 TEXT, screenshot_url_4 TEXT,
        screenshot_width_height_1 TEXT, screenshot_width_height_2 TEXT, screenshot_width_height_3 TEXT,
        screenshot_width_height_4 TEXT, ipad_screenshot_url_1 TEXT, ipad_screenshot_url_2 TEXT,
        ipad_screenshot_url_3 TEXT, ipad_screenshot_url_4 TEXT, ipad_screenshot_width_height_1 TEXT,
        ipad_screenshot_width_height_2 TEXT, ipad_screenshot_width_height_3 TEXT,
        ipad_screenshot_width_height_4 TEXT);
    CREATE UNIQUE INDEX application_detail_pk ON application_detail(application_id, language_code);
    CREATE TABLE application_device_type (export_date INTEGER, application_id INTEGER, device_type_id INTEGER);
    CREATE UNIQUE INDEX application_device_type_pk ON application_device_type(application_id, device_type_id);
    CREATE TABLE device_type (export_date INTEGER, device_type_id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE artist (export_date INTEGER, artist_id INTEGER PRIMARY KEY, name TEXT, is_actual_artist INTEGER,
        view_url TEXT, artist_type_id INTEGER);
    CREATE TABLE artist_application (export_date INTEGER, artist_id INTEGER, application_id INTEGER);
    CREATE INDEX artist_application_app ON artist_application(application_id);
    CREATE TABLE genre (export_date INTEGER, genre_id INTEGER PRIMARY KEY, parent_id INTEGER, name TEXT);
    CREATE TABLE genre_application (export_date INTEGER, genre_id INTEGER, application_id INTEGER,
        is_primary INTEGER);
    CREATE UNIQUE INDEX genre_application_pk ON genre_application(genre_id, application_id);
    CREATE INDEX genre_application_app ON genre_application(application_id);
    CREATE TABLE storefront (export_date INTEGER, storefront_id INTEGER PRIMARY KEY, country_code TEXT, name TEXT);
    CREATE TABLE media_type (export_date INTEGER, media_type_id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE collection (export_date INTEGER, collection_id INTEGER PRIMARY KEY, name TEXT, title_version TEXT,
        search_terms TEXT, parental_advisory_id INTEGER, artist_display_name TEXT, view_url TEXT, artwork_url TEXT,
        original_release_date TEXT, itunes_release_date TEXT, label_studio TEXT, content_provider_name TEXT,
        copyright TEXT, p_line TEXT, media_type_id INTEGER, is_compilation INTEGER, collection_type_id INTEGER);
    CREATE TABLE song (export_date INTEGER, song_id INTEGER PRIMARY KEY, name TEXT, title_version TEXT,
        search_terms TEXT, parental_advisory_id INTEGER, artist_display_name TEXT, collection_display_name TEXT,
        view_url TEXT, original_release_date TEXT, itunes_release_date TEXT, track_length INTEGER,
        copyright TEXT, p_line TEXT, preview_url TEXT, preview_length INTEGER);
    CREATE TABLE video (export_date INTEGER, video_id INTEGER PRIMARY KEY, name TEXT, title_version TEXT,
        search_terms TEXT, parental_advisory_id INTEGER, artist_display_name TEXT, collection_display_name TEXT,
        media_type_id INTEGER, view_url TEXT, artwork_url TEXT, original_release_date TEXT,
        itunes_release_date TEXT, studio_name TEXT, network_name TEXT, content_provider_name TEXT,
        track_length INTEGER, copyright TEXT, p_line TEXT, short_description TEXT, long_description TEXT,
        episode_production_number TEXT);
    CREATE TABLE collection_song (export_date INTEGER, collection_id INTEGER, song_id INTEGER,
        track_number INTEGER, volume_number INTEGER);
    CREATE INDEX collection_song_song ON collection_song(song_id);
    CREATE TABLE application_price (export_date INTEGER, application_id INTEGER, retail_price TEXT,
        currency_code TEXT, storefront_id INTEGER);
    CREATE UNIQUE INDEX application_price_pk ON application_price(application_id, storefront_id);
    CREATE TABLE application_popularity_per_genre (export_date INTEGER, storefront_id INTEGER, genre_id INTEGER,
        application_id INTEGER, application_rank INTEGER);
    CREATE UNIQUE INDEX application_popularity_pk
        ON application_popularity_per_genre(storefront_id, genre_id, application_id);
    """

    /// Rows every test can rely on.
    public static let rows = """
    INSERT INTO storefront VALUES (1, 143441, 'USA', 'United States'), (1, 143443, 'DEU', 'Germany'),
        (1, 143462, 'JPN', 'Japan'), (1, 143444, 'GBR', 'United Kingdom'), (1, 143466, 'KOR', 'Korea'),
        (1, 143442, 'FRA', 'France');
    INSERT INTO device_type VALUES (1, 1, 'iPhone'), (1, 2, 'iPad');
    INSERT INTO genre VALUES (1, 36, NULL, 'App Store'), (1, 6018, 36, 'Books'), (1, 6006, 36, 'Reference'),
        (1, 6014, 36, 'Games'), (1, 7001, 6014, 'Action');
    INSERT INTO media_type VALUES (1, 1, 'Music'), (1, 11, 'Books'), (1, 6, 'Movies'), (1, 7, 'Music Videos');
    INSERT INTO application VALUES
        (1452074401007, 364709193, 'iBooks', '4+', 'Apple', 'Apple Inc.', 'http://www.apple.com',
         'http://support.apple.com', 'http://itunes.apple.com/app/ibooks/id364709193?uo=5',
         'http://a1.mzstatic.com/large.png', 'http://a1.mzstatic.com/small.png', '2010-04-03',
         '© Apple', 'Read books.' || char(10) || 'Line two.', '4.1', '4.1', 51234567),
        (1452074401007, 562148264, 'Baby Snap Date', '12+', 'Snap Co', 'Snap Co', NULL, NULL,
         'http://itunes.apple.com/app/baby-snap-date/id562148264?uo=5', NULL, NULL, '2012',
         NULL, NULL, '1.0', NULL, 1000),
        (1452074401007, 700000001, 'Café Olé', '4+', 'Zoë Dev', 'Zoë Dev', NULL, NULL, NULL, NULL, NULL,
         '2012-09-25T10:00:00Z', NULL, NULL, '2.0', NULL, NULL),
        (1452074401007, 700000002, '東京タワー案内', '4+', '日本開発', '日本開発', NULL, NULL, NULL, NULL,
         NULL,
         NULL, NULL, NULL, '1.0', NULL, NULL),
        (1452074401007, 700000003, 'Cafeteria Manager', '9+', 'Other Dev', 'Other Dev', NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, '1.0', NULL, NULL),
        (1452074401007, 700000004, 'Angry "Quotes" AND( OR', '4+', 'Hostile', 'Hostile', NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, '1.0', NULL, NULL),
        (1452074401007, 700000005, '서울 지하철', '4+', '한국', '한국', NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, '1.0', NULL, NULL);
    INSERT INTO application_detail (export_date, application_id, language_code, title, description, release_notes)
        VALUES (1, 364709193, 'FR', 'iBooks (français)', 'Lire des livres.', 'Corrections'),
               (1, 364709193, 'en', 'iBooks', 'Read books.', 'Fixes');
    INSERT INTO application_device_type VALUES (1, 364709193, 1), (1, 364709193, 2);
    INSERT INTO artist VALUES (1, 284417353, 'Apple', 1, 'https://itunes.apple.com/us/artist/apple/id284417353', 7),
        (1, 900000001, 'Édith Piaf', 1, 'https://music.apple.com/fr/artist/edith-piaf/id900000001', 1);
    INSERT INTO artist_application VALUES (1, 284417353, 364709193);
    INSERT INTO genre_application VALUES (1, 6018, 364709193, 1), (1, 6006, 364709193, 0),
        (1, 6014, 562148264, 1), (1, 6014, 700000001, 1), (1, 6014, 700000003, 1);
    INSERT INTO application_popularity_per_genre VALUES (1, 143441, 6014, 700000003, 1),
        (1, 143441, 6014, 562148264, 2);
    INSERT INTO application_price VALUES
        (1, 364709193, '0.000', 'USD', 143441), (1, 364709193, '0.000', 'EUR', 143443),
        (1, 562148264, '0.990', 'USD', 143441), (1, 562148264, '0.99', 'EUR', 143443),
        (1, 562148264, '120.000', 'JPY', 143462), (1, 562148264, '0.79', 'GBP', 143444),
        (1, 562148264, '1200.000', 'KRW', 143466), (1, 562148264, '1234.5', 'EUR', 143442);
    INSERT INTO collection VALUES
        (1, 500000001, 'La Vie en rose', NULL, NULL, NULL, 'Édith Piaf',
         'https://itunes.apple.com/fr/album/la-vie-en-rose/id500000001', 'http://a1/art.jpg', '1947',
         '2005-01-01', 'Columbia', NULL, '℗ 1947', NULL, 1, 0, 1),
        (1, 500000002, 'A Book of Things', NULL, NULL, NULL, 'Some Author', NULL, NULL, NULL, '2011-05-05',
         NULL, NULL, NULL, NULL, 11, 0, 1);
    INSERT INTO song VALUES (1, 600000001, 'La Vie en rose', NULL, NULL, NULL, 'Édith Piaf', 'La Vie en rose',
        'https://itunes.apple.com/fr/album/la-vie-en-rose/id500000001?i=600000001', '1947', '2005-01-01', 185000,
        NULL, NULL, 'http://preview', 30000);
    INSERT INTO collection_song VALUES (1, 500000001, 600000001, 1, 1);
    INSERT INTO video VALUES (1, 800000001, 'Big Movie', NULL, NULL, NULL, 'Director', NULL, 6,
        'https://itunes.apple.com/us/movie/big-movie/id800000001', NULL, '2001', '2001-02-03', NULL, NULL, NULL,
        7200000, NULL, NULL, 'Short.', 'Long description.', NULL);
    """
}
