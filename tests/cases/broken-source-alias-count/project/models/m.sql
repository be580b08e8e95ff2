SELECT p.page FROM source('page_views') AS p(page, b, c)
