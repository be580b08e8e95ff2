SELECT user_id, page, viewed_at
FROM source('page_views')
