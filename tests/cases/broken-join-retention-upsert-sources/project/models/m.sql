SELECT t.customer_id, t.tier FROM source('tiers') AS t JOIN source('limits') AS l ON t.customer_id = l.customer_id
