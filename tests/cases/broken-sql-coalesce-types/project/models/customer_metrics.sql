SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE COALESCE(amount, 'none') IS NOT NULL
GROUP BY customer_id
