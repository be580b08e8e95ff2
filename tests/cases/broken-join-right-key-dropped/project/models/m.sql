SELECT t.customer_id, t.tier, l.credit_limit FROM source('tiers') AS t RIGHT JOIN source('limits') AS l ON t.customer_id = l.customer_id
