SELECT customer_id, amount
FROM (
    SELECT customer_id, amount,
        ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount DESC) AS rn
    FROM source('orders')
)
WHERE rn < -9223372036854775808
