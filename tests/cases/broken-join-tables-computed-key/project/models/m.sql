SELECT t.customer_id, t.tier, l.credit_limit
FROM source('customer_tiers') AS t
JOIN source('customer_limits') AS l ON t.customer_id = l.customer_id AND t.tier = CAST(l.credit_limit AS STRING)
