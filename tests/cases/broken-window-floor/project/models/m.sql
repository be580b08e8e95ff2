SELECT page, FLOOR(viewed_at TO MINUTE) AS minute
FROM source('page_views')
