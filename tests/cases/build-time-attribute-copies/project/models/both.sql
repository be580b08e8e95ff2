SELECT page, viewed_at, viewed_at AS seen_again FROM source('page_views')
