SELECT page, FLOOR(viewed_at TO WEEK) AS week
FROM source('page_views')
